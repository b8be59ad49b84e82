import { HTTPException } from 'hono/http-exception';
import {
  ErrorCode,
  InternalError,
  InvalidRequestError,
  LeaseholdError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  isLeaseholdError,
} from '../domain/errors.js';

/** The one place error codes become HTTP statuses. Exhaustive: a new code does not compile until it has one. */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.InvalidRequest]: 400,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.AlreadyExists]: 409,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.LeaseConflict]: 409,
  [ErrorCode.LeaseUnavailable]: 409,
  [ErrorCode.PolicyViolation]: 409,
  [ErrorCode.NodeBusy]: 409,
  [ErrorCode.InvalidState]: 409,
  [ErrorCode.BackendUnavailable]: 503,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.UnsupportedMediaType]: 415,
  [ErrorCode.UpgradeRequired]: 426,
  [ErrorCode.TooManyRequests]: 429,
  // A 4xx (the caller cannot fix it, but nothing is wrong with the server either): as "identity is managed by Keystone".
  [ErrorCode.NotConfigured]: 409,
  [ErrorCode.Internal]: 500,
};

/** Turns anything thrown into the one error shape; unknown errors become a generic 500 (details are logged). */
export function toLeaseholdError(err: unknown): LeaseholdError {
  if (isLeaseholdError(err)) return err;
  if (err instanceof HTTPException) {
    // Raised by Hono itself: malformed JSON (400), body too large (413), wrong content type (415).
    const message = err.message || 'invalid request';
    if (err.status === 413) return new PayloadTooLargeError(message);
    if (err.status === 415) return new UnsupportedMediaTypeError(message);
    return new InvalidRequestError(message);
  }
  return new InternalError('internal error; the server log has the details', { cause: err });
}

/** The HTTP status of anything thrown, by the one mapping above. */
export function httpStatusOf(err: unknown): number {
  return HTTP_STATUS[toLeaseholdError(err).code];
}
