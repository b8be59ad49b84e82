/**
 * The one closed error hierarchy. Every failure a caller can see is one of these classes, each with a stable
 * `code` (part of the public API) and a `retryable` flag. HTTP statuses are assigned in exactly one place:
 * `src/api/error-response.ts`.
 */
export const ErrorCode = {
  InvalidRequest: 'invalid_request',
  Unauthenticated: 'unauthenticated',
  Forbidden: 'forbidden',
  NotFound: 'not_found',
  AlreadyExists: 'already_exists',
  Conflict: 'conflict',
  LeaseConflict: 'lease_conflict',
  LeaseUnavailable: 'lease_unavailable',
  PolicyViolation: 'policy_violation',
  NodeBusy: 'node_busy',
  InvalidState: 'invalid_state',
  BackendUnavailable: 'backend_unavailable',
  PayloadTooLarge: 'payload_too_large',
  UnsupportedMediaType: 'unsupported_media_type',
  UpgradeRequired: 'upgrade_required',
  TooManyRequests: 'too_many_requests',
  NotConfigured: 'not_configured',
  Internal: 'internal',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export type ErrorDetails = Readonly<Record<string, unknown>>;

interface ErrorOptions {
  readonly details?: ErrorDetails;
  readonly cause?: unknown;
}

export abstract class LeaseholdError extends Error {
  abstract readonly code: ErrorCode;
  /** True when the same request may succeed later unchanged (busy node, backend down). */
  readonly retryable: boolean = false;
  readonly details: ErrorDetails;

  constructor(message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.details = options.details ?? {};
  }
}

/** The request is malformed or violates a rule it could have known (validation, bad expression). */
export class InvalidRequestError extends LeaseholdError {
  readonly code = ErrorCode.InvalidRequest;
}

/** No credentials, or credentials that are unknown, revoked or expired. */
export class UnauthenticatedError extends LeaseholdError {
  readonly code = ErrorCode.Unauthenticated;
  constructor(message = 'a valid token is required (Authorization: Bearer <token> or X-Auth-Token)') {
    super(message);
  }
}

/** The caller can see the thing but may not do this to it. */
export class ForbiddenError extends LeaseholdError {
  readonly code = ErrorCode.Forbidden;
}

/** The thing does not exist, or the caller may not know that it exists. */
export class NotFoundError extends LeaseholdError {
  readonly code = ErrorCode.NotFound;
  constructor(resource: string, id: string, options: ErrorOptions = {}) {
    super(`${resource} ${JSON.stringify(id)} not found`, {
      ...options,
      details: { resource, id, ...options.details },
    });
  }
}

/** A unique name or key is already taken. */
export class AlreadyExistsError extends LeaseholdError {
  readonly code = ErrorCode.AlreadyExists;
}

/** The request conflicts with the current state of something (generic). */
export class ConflictError extends LeaseholdError {
  readonly code = ErrorCode.Conflict;
}

/** Two leases would overlap on one node (the database's exclusion constraint said no). */
export class LeaseConflictError extends LeaseholdError {
  readonly code = ErrorCode.LeaseConflict;
}

/** No assignment of free, allowed nodes meets the request in its window (details say why, and when it would). */
export class LeaseUnavailableError extends LeaseholdError {
  readonly code = ErrorCode.LeaseUnavailable;
}

/**
 * A worker's claim on a lease task was taken over by another worker (it stalled or lost the database longer than
 * the claim lasts): what it was about to record is not written; the worker holding the claim now goes on.
 */
export class ClaimLostError extends ConflictError {
  constructor(taskId: string, worker: string) {
    super(`the claim of worker ${worker} on task ${taskId} was taken over by another worker`, { details: { task_id: taskId, worker } });
  }
}

/** An owner's offer policy or the project's quota refuses the request as asked (its length, its size). */
export class PolicyViolationError extends LeaseholdError {
  readonly code = ErrorCode.PolicyViolation;
}

/** The hardware is busy with another operation (Ironic's "node is locked"); try again shortly. */
export class NodeBusyError extends LeaseholdError {
  readonly code = ErrorCode.NodeBusy;
  override readonly retryable = true;
}

/** The node is not in a state that allows this operation (e.g. provide from `active`). */
export class InvalidStateError extends LeaseholdError {
  readonly code = ErrorCode.InvalidState;
}

/**
 * A node is not ready for the next step yet — still being cleaned for its previous lease, in maintenance — for a
 * reason that is not a driver error: the lease engine waits and tries again, reporting it like a failure.
 */
export class NodeNotReadyError extends InvalidStateError {
  override readonly retryable = true;
}

/** A backend (the database, Ironic) cannot be reached right now. */
export class BackendUnavailableError extends LeaseholdError {
  readonly code = ErrorCode.BackendUnavailable;
  override readonly retryable = true;
}

/**
 * The client sent too many unknown tokens lately and is not heard until `retryAfterSeconds` have passed (the
 * answer's Retry-After). A client whose tokens are good is never refused this way.
 */
export class TooManyRequestsError extends LeaseholdError {
  readonly code = ErrorCode.TooManyRequests;
  override readonly retryable = true;
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(`too many unknown tokens from this address: try again in ${retryAfterSeconds} s`, {
      details: { retry_after_seconds: retryAfterSeconds },
    });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The request body is larger than the server takes (1 MiB). */
export class PayloadTooLargeError extends LeaseholdError {
  readonly code = ErrorCode.PayloadTooLarge;
}

/** The request body is not in a type the route reads (JSON). */
export class UnsupportedMediaTypeError extends LeaseholdError {
  readonly code = ErrorCode.UnsupportedMediaType;
}

/** The endpoint speaks another protocol (a console stream is a WebSocket). */
export class UpgradeRequiredError extends LeaseholdError {
  readonly code = ErrorCode.UpgradeRequired;
}

/** A feature this deployment has not been set up for (e.g. tenant networks without Neutron); the message says what to configure. */
export class NotConfiguredError extends LeaseholdError {
  readonly code = ErrorCode.NotConfigured;
}

/** A bug or an unexpected failure; the message shown to clients is generic. */
export class InternalError extends LeaseholdError {
  readonly code = ErrorCode.Internal;
}

export function isLeaseholdError(err: unknown): err is LeaseholdError {
  return err instanceof LeaseholdError;
}
