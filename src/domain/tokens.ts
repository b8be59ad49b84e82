import { createHash, randomBytes } from 'node:crypto';

/** API tokens: 256 random bits, shown once, stored as a SHA-256 hash (enough for high-entropy secrets). */
const PREFIX = 'lh_';
/** Characters of an issued token shown after `lh_`: 24 of its 256 random bits, enough to tell a few tokens apart. */
const SHOWN_CHARS = 4;
/** Hex digits of the SHA-256 shown for an operator-chosen token (`sha256:` + these). */
const FINGERPRINT_HEX = 8;

export interface IssuedToken {
  /** The secret, returned to the caller once. */
  readonly value: string;
  readonly hash: string;
  /** Enough to recognise the token in a list, not to use it, nor to learn any part of a chosen secret. */
  readonly prefix: string;
}

export function issueToken(): IssuedToken {
  const value = PREFIX + randomBytes(32).toString('base64url');
  return { value, hash: hashToken(value), prefix: value.slice(0, PREFIX.length + SHOWN_CHARS) };
}

/**
 * Wraps an operator-chosen value (LEASEHOLD_ADMIN_TOKEN) in the same shape. Its characters may be words the
 * operator picked, so none of them is shown: its prefix is a fingerprint of its hash, `sha256:` and the first 8 hex
 * digits, which the operator can check with `printf %s "$LEASEHOLD_ADMIN_TOKEN" | sha256sum`.
 */
export function fromValue(value: string): IssuedToken {
  const hash = hashToken(value);
  return { value, hash, prefix: `sha256:${hash.slice(0, FINGERPRINT_HEX)}` };
}

export function hashToken(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
