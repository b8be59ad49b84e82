import type { Clock } from '../domain/clock.js';
import { InvalidRequestError } from '../domain/errors.js';
import { KeystoneClient, type IssuedToken, type KeystoneCredentials } from './keystone-client.js';
import { catalogUrl, type KeystoneTokenInfo } from './keystone-token.js';

/**
 * A service token is renewed this long before it expires (Keystone's default lifetime is 1 hour), or a quarter of
 * its life before when it lives less than 20 minutes: a cloud with 2-minute tokens must not cost a sign-in per call.
 */
const RENEW_BEFORE_MS = 5 * 60_000;

function renewAt(issued: IssuedToken): number {
  const expires = issued.info.expiresAt.getTime();
  const life = issued.info.issuedAt ? expires - issued.info.issuedAt.getTime() : Infinity;
  return expires - Math.min(RENEW_BEFORE_MS, life > 0 ? life / 4 : RENEW_BEFORE_MS);
}

/**
 * Leasehold's own Keystone session, with its service credentials: the token it validates users' tokens with and
 * calls Ironic with (a TokenSource for the Ironic driver), renewed before it expires and at once when refused
 * (`invalidate`), and the service catalog that token carries. Concurrent callers share one renewal.
 */
export class KeystoneSession {
  private current: IssuedToken | null = null;
  private pending: Promise<IssuedToken> | null = null;

  constructor(
    readonly client: KeystoneClient,
    private readonly credentials: KeystoneCredentials,
    private readonly clock: Clock,
  ) {}

  /** The service token, renewed when it is close to its expiry. */
  async token(): Promise<string> {
    return (await this.issued()).token;
  }

  /** What the service token says (its user, roles and catalog). */
  async info(): Promise<KeystoneTokenInfo> {
    return (await this.issued()).info;
  }

  /** Forgets `token` (refused by a service: Keystone revoked it, or rotated its keys); the next call signs in again. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = null;
  }

  /** The URL of a service in the catalog, or an error naming what to configure. */
  async endpoint(type: string, iface: string, region: string | null): Promise<string> {
    const url = catalogUrl((await this.info()).catalog, type, iface, region);
    if (!url) {
      throw new InvalidRequestError(
        `Keystone's catalog has no ${iface} endpoint of service type "${type}"${region ? ` in region ${region}` : ''}: ` +
          'register one, or configure the URL directly',
        { details: { service_type: type, interface: iface, region } },
      );
    }
    return url;
  }

  private issued(): Promise<IssuedToken> {
    const now = this.clock.now().getTime();
    if (this.current && renewAt(this.current) > now) return Promise.resolve(this.current);
    this.pending ??= this.client
      .issueToken(this.credentials)
      .then((issued) => (this.current = issued))
      .finally(() => {
        this.pending = null;
      });
    return this.pending;
  }
}
