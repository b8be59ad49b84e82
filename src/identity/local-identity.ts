import type { Clock } from '../domain/clock.js';
import type { IdentityBackend } from '../domain/identity-backend.js';
import type { Principal } from '../domain/identity.js';
import { hashToken } from '../domain/tokens.js';
import type { Store } from '../store/store.js';

/**
 * Leasehold's own users and tokens (LEASEHOLD_IDENTITY=local, the embedded default): a token is looked up by its
 * SHA-256 hash on every request (one indexed read), so revocation and expiry take effect at once on every replica.
 */
export class LocalIdentity implements IdentityBackend {
  readonly kind = 'local';

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  authenticate(token: string): Promise<Principal | null> {
    return this.store.authenticate(hashToken(token), this.clock.now());
  }

  /** The store answers (checked by /readyz on its own). */
  async ping(): Promise<void> {}
}
