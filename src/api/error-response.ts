import type { ZodError } from 'zod';
import { HTTP_STATUS } from '../access/http-errors.js';
import { InvalidRequestError, type ErrorCode, type ErrorDetails, type LeaseholdError } from '../domain/errors.js';

export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly details: ErrorDetails };
}

export function errorResponse(err: LeaseholdError): { status: number; body: ErrorBody } {
  return { status: HTTP_STATUS[err.code], body: { error: { code: err.code, message: err.message, details: err.details } } };
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
