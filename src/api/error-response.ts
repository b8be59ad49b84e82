import { HTTPException } from 'hono/http-exception';
import type { ZodError } from 'zod';
import {
  ErrorCode,
  InternalError,
  InvalidRequestError,
  LeaseholdError,
  isLeaseholdError,
  type ErrorDetails,
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
  [ErrorCode.TooManyRequests]: 429,
  [ErrorCode.Internal]: 500,
};

export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly details: ErrorDetails };
}

/** Turns anything thrown into the one error shape; unknown errors become a generic 500 (details are logged). */
export function toLeaseholdError(err: unknown): LeaseholdError {
  if (isLeaseholdError(err)) return err;
  if (err instanceof HTTPException) {
    // Raised by Hono itself: malformed JSON (400), body too large (413), wrong content type (415).
    return new InvalidRequestError(err.message || 'invalid request', { details: { http_status: err.status } });
  }
  return new InternalError('internal error; the server log has the details', { cause: err });
}

export function errorResponse(err: LeaseholdError): { status: number; body: ErrorBody } {
  const status =
    err.code === ErrorCode.InvalidRequest && typeof err.details.http_status === 'number'
      ? err.details.http_status
      : HTTP_STATUS[err.code];
  const details = { ...err.details };
  delete details.http_status;
  return { status, body: { error: { code: err.code, message: err.message, details } } };
}

/** Hono's validation targets, as a client knows them. */
const TARGET_NAMES: Readonly<Record<string, string>> = { json: 'body', query: 'query', param: 'path', header: 'header' };

/** A schema validation failure, naming each offending field. */
export function validationError(error: ZodError, target: string): InvalidRequestError {
  const where = TARGET_NAMES[target] ?? target;
  const issues = error.issues.map((issue) => ({
    field: [where, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  const summary = issues.map((i) => `${i.field}: ${i.message}`).join('; ');
  return new InvalidRequestError(`invalid request: ${summary}`, { details: { issues } });
}
