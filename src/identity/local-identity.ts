import type { Clock } from '../domain/clock.js';
import type { IdentityBackend } from '../domain/identity-backend.js';
import type { Principal } from '../domain/identity.js';
import { hashToken } from '../domain/tokens.js';
import { Coalescer } from '../store/coalescer.js';
import type { TokenAsk } from '../store/queries/authenticate-many.js';
import type { NodeWithLease, Store } from '../store/store.js';

/** Tokens authenticated in one read at most. */
const MAX_BATCH = 500;

/**
 * Leasehold's own users and tokens (LEASEHOLD_IDENTITY=local, the embedded default): a token is looked up by its
 * SHA-256 hash on every request (one indexed read), so revocation and expiry take effect at once on every replica.
 * The requests that authenticate in the same turn of the event loop share one read (each sent after its callers
 * asked, so a revocation committed before a request is seen by it): a burst of 64 lease requests on PGlite made 64
 * token reads, a quarter of its statements.
 */
export class LocalIdentity implements IdentityBackend {
  readonly kind = 'local';
  private readonly batches: Coalescer<TokenAsk, Principal | null>;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    this.batches = new Coalescer((asks) => this.store.authenticateMany(asks), { maxBatch: MAX_BATCH });
  }

  authenticate(token: string): Promise<Principal | null> {
    return this.batches.submit({ tokenHash: hashToken(token), now: this.clock.now() });
  }

  /**
   * A gateway node request's token and node in one query, at this instant (not batched: it is one read already,
   * and waiting for the next turn to join a batch would add that turn to the request).
   */
  authenticateWithNode(token: string, idOrName: string): Promise<{ readonly principal: Principal; readonly found: NodeWithLease | null } | null> {
    return this.store.tokenWithNode(hashToken(token), idOrName, this.clock.now());
  }

  /** The store answers (checked by /readyz on its own). */
  async ping(): Promise<void> {}
}
