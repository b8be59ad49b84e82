import type { Clock } from '../domain/clock.js';
import { TooManyRequestsError } from '../domain/errors.js';

export interface AuthLimiterOptions {
  /** Unknown tokens a client may send in a row before it is refused. */
  readonly burst: number;
  /** After that, one more every this many milliseconds (the sustained rate). */
  readonly refillMs: number;
  /** Clients remembered at most; the one that failed longest ago is forgotten first. */
  readonly maxClients: number;
}

/**
 * 10 in a burst, then 10 a minute: a person who mistypes a token or a script with a stale one never notices;
 * a guesser gets 14,400 tries a day instead of thousands a second. 10,000 clients take about 1 MB.
 */
export const AUTH_LIMITS: AuthLimiterOptions = { burst: 10, refillMs: 6_000, maxClients: 10_000 };

interface Bucket {
  /** Unknown tokens the client may still send now (fractions refill over time). */
  allowance: number;
  /** When `allowance` was computed (clock ms). */
  at: number;
}

/**
 * Slows down clients that present unknown tokens, per remote address (IPv6 by its /64, the block one host gets):
 * a token bucket of bad tokens per client. Only a token that was looked up and not found counts; a request with
 * no token and every request with a good token count for nothing, so a client that authenticates fine is never
 * slowed. A refused client's token is not looked up at all (a guesser learns nothing while refused). Time is the
 * injected clock's. Clients behind one proxy share its address: the proxy's own limits apply to them.
 */
export class AuthLimiter {
  private readonly clients = new Map<string, Bucket>();

  constructor(
    private readonly clock: Clock,
    private readonly options: AuthLimiterOptions = AUTH_LIMITS,
  ) {}

  /** Clients currently remembered (bounded by `maxClients`). */
  get size(): number {
    return this.clients.size;
  }

  /** The refusal for a client that may not present a token now (429, with when to retry), or null. */
  refusal(address: string | null): TooManyRequestsError | null {
    if (address === null) return null;
    const bucket = this.current(clientKey(address));
    if (!bucket || bucket.allowance >= 1) return null;
    return new TooManyRequestsError(Math.max(1, Math.ceil(((1 - bucket.allowance) * this.options.refillMs) / 1000)));
  }

  /** Records an unknown token from `address`. */
  failed(address: string | null): void {
    if (address === null) return;
    const key = clientKey(address);
    const bucket = this.current(key) ?? { allowance: this.options.burst, at: this.now() };
    bucket.allowance -= 1;
    // Re-inserted last: the Map's order is the order of last failure, so the first entry is the stalest.
    this.clients.delete(key);
    while (this.clients.size >= this.options.maxClients) this.clients.delete(this.clients.keys().next().value!);
    this.clients.set(key, bucket);
  }

  /** The client's bucket refilled to now; forgotten (undefined) once full again. */
  private current(key: string): Bucket | undefined {
    const bucket = this.clients.get(key);
    if (!bucket) return undefined;
    const now = this.now();
    bucket.allowance = Math.min(this.options.burst, bucket.allowance + (now - bucket.at) / this.options.refillMs);
    bucket.at = now;
    if (bucket.allowance >= this.options.burst) {
      this.clients.delete(key);
      return undefined;
    }
    return bucket;
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}

/** One key per client: IPv4 as is (also when mapped into IPv6), IPv6 by its first 64 bits. */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const first = head ? head.split(':') : [];
  const last = tail ? tail.split(':') : [];
  const groups = tail === undefined ? first : [...first, ...Array<string>(Math.max(0, 8 - first.length - last.length)).fill('0'), ...last];
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
