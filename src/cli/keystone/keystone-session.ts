import type { Credential } from '../client.js';
import type { AuthRequest } from './auth-request.js';
import { issueToken, type IssuedToken, type IssueOptions } from './keystone-client.js';
import type { TokenCache } from './token-cache.js';

/** A cached token is used until this long before its `expires_at`, so it never expires mid-command. */
export const REUSE_MARGIN_MS = 60_000;

/** Where the token in hand came from: shown by `whoami`. */
export type TokenOrigin = 'cache' | 'keystone';

/**
 * The Keystone token of one identity for one command: from the cache while it has more than a minute left
 * (REUSE_MARGIN_MS), else from Keystone (and then cached). After a 401 from Leasehold, `renew` drops it and asks
 * Keystone again.
 */
export class KeystoneSession implements Credential {
  readonly header = 'x-auth-token';
  private held: IssuedToken | undefined;
  private heldOrigin: TokenOrigin | undefined;

  constructor(
    readonly request: AuthRequest,
    private readonly cache: TokenCache,
    private readonly now: () => Date,
    private readonly options: IssueOptions = {},
    /** Told every token obtained, so it can be redacted from any output. */
    private readonly onToken: (token: string) => void = () => undefined,
  ) {}

  /** Where the token in hand came from, once there is one. */
  get origin(): TokenOrigin | undefined {
    return this.heldOrigin;
  }

  /** The token in hand (its expiry, user, project), once there is one. */
  get current(): IssuedToken | undefined {
    return this.held;
  }

  get refusedHint(): string {
    return `the Keystone token of ${this.request.identity} was refused; does the server run with LEASEHOLD_IDENTITY=keystone?`;
  }

  private usable(token: IssuedToken): boolean {
    return Date.parse(token.expiresAt) - REUSE_MARGIN_MS > this.now().getTime();
  }

  /**
   * The token in hand, else the cached one while it has more than a minute left, else a new one. A token in hand
   * is kept for the whole command even near its end (or with a clock ahead of Keystone's): asking Keystone again
   * before every request would not make it fresher; if it does expire meanwhile, the 401 renews it.
   */
  async issued(): Promise<IssuedToken> {
    if (this.held) return this.held;
    const cached = await this.cache.read(this.request.cacheKey);
    if (cached && this.usable(cached)) {
      this.onToken(cached.token);
      [this.held, this.heldOrigin] = [cached, 'cache'];
      return cached;
    }
    return this.fresh();
  }

  /** A new token from Keystone whatever the cache holds (`login` checks the credentials themselves), then cached. */
  async fresh(): Promise<IssuedToken> {
    const issued = await issueToken(this.request, this.options);
    this.onToken(issued.token);
    [this.held, this.heldOrigin] = [issued, 'keystone'];
    await this.cache.write(this.request.cacheKey, { authUrl: this.request.authUrl, identity: this.request.identity }, issued);
    return issued;
  }

  async token(): Promise<string> {
    return (await this.issued()).token;
  }

  /** After a 401: the token was revoked or the server restarted its view; forget it everywhere and get another. */
  async renew(): Promise<string> {
    await this.cache.remove(this.request.cacheKey);
    this.held = undefined;
    return (await this.fresh()).token;
  }
}
