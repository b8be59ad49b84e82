import { createHash, randomBytes } from 'node:crypto';

/** API tokens: 256 random bits, shown once, stored as a SHA-256 hash (enough for high-entropy secrets). */
const PREFIX = 'lh_';

export interface IssuedToken {
  /** The secret, returned to the caller once. */
  readonly value: string;
  readonly hash: string;
  /** Enough to recognise the token in a list, not to use it. */
  readonly prefix: string;
}

export function issueToken(): IssuedToken {
  return fromValue(PREFIX + randomBytes(32).toString('base64url'));
}

/** Wraps an operator-chosen value (LEASEHOLD_ADMIN_TOKEN) in the same shape. */
export function fromValue(value: string): IssuedToken {
  return { value, hash: hashToken(value), prefix: value.slice(0, PREFIX.length + 6) };
}

export function hashToken(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
