import { isLeaseholdError } from '../domain/errors.js';
import { HTTP_STATUS } from '../access/http-errors.js';

/**
 * WebSocket close codes of the console (README, "Serial console"). Leasehold's own codes are 4000 + the HTTP
 * status the same refusal gets in the REST API (src/api/error-response.ts is the one mapping), plus 4410 for
 * access that ended while the connection was open, 4429 for a connection over the caps (ConsoleProxy), and 4502
 * for a console the node's side closed.
 */
export const CloseCode = {
  /** The client detached (or, from the server, a normal end). */
  Normal: 1000,
  /** The server is shutting down. */
  GoingAway: 1001,
  /** Something unexpected; the server log has the details. */
  Internal: 1011,
  /** The console token is unknown, expired, revoked (also while open), or for another console. */
  TokenRefused: 4401,
  /** The policy does not let the token's user use (or turn on) this node's console. */
  Forbidden: 4403,
  /** The token's user cannot reach the node now (no active lease, not its owner): what the REST API calls 404. */
  NotFound: 4404,
  /** The console is in a state that does not allow it (e.g. Ironic refuses to enable this console interface). */
  InvalidState: 4409,
  /** Access ended while the connection was open: the lease ended, was shortened or cancelled. */
  AccessEnded: 4410,
  /** Too many connections open at once with this console token, or for this user, on this server (HTTP's 429). */
  TooManyConnections: 4429,
  /** The node's console closed the stream. */
  ConsoleClosed: 4502,
  /** The console could not be reached or did not come up in time (Ironic down, socat not listening). */
  Unavailable: 4503,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

/** The close code for an error thrown while opening a console: 4000 + its REST status, 1011 for anything else. */
export function closeCodeFor(err: unknown): number {
  if (!isLeaseholdError(err)) return CloseCode.Internal;
  const status = HTTP_STATUS[err.code];
  return status >= 500 && status !== 503 ? CloseCode.Internal : 4000 + status;
}

/** Close reasons are at most 123 bytes of UTF-8 (RFC 6455); longer ones are cut at a character boundary. */
export function closeReason(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= 123) return text;
  let cut = 120;
  // Step back over UTF-8 continuation bytes so no character is split.
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
  return `${bytes.subarray(0, cut).toString('utf8')}...`;
}
