import {
  BackendUnavailableError,
  InvalidRequestError,
  InvalidStateError,
  NodeBusyError,
  NotFoundError,
} from '../../domain/errors.js';
import type { LeaseholdError } from '../../domain/errors.js';

/**
 * How a failed Ironic request is read. Ironic answers errors as
 * `{"error_message": "{\"faultstring\": \"...\", \"faultcode\": \"Client\", \"debuginfo\": null}"}`
 * (`error_message` is a JSON string; some releases and proxies send the object itself, or plain text).
 */
export function faultstring(bodyText: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    const text = bodyText.trim();
    return text === '' ? null : text.slice(0, 500);
  }
  let message: unknown = (body as { error_message?: unknown } | null)?.error_message ?? body;
  if (typeof message === 'string') {
    const text = message;
    try {
      message = JSON.parse(text);
    } catch {
      return text;
    }
  }
  const fault = (message as { faultstring?: unknown } | null)?.faultstring;
  if (typeof fault === 'string') return fault;
  const title = (message as { title?: unknown; description?: unknown } | null)?.description;
  return typeof title === 'string' ? title : null;
}

/** Ironic's NodeLocked: `409 Node X is locked by host Y, please retry after the current operation is completed.` */
export function isNodeLocked(status: number, fault: string | null): boolean {
  return status === 409 && (fault === null || /\bis locked\b|\blocked by\b|NodeLocked/i.test(fault));
}

/** What the failed request was about, to choose the error class. */
export interface FailureContext {
  readonly method: string;
  readonly path: string;
  /** The node the request addressed (a 404 then means that node does not exist). */
  readonly nodeId?: string;
  /** A state transition (power, provision, console, boot device): 400/409 mean the node's state refuses it. */
  readonly transition?: boolean;
}

/** The domain error for an Ironic HTTP error answer (after retries, where they apply). */
export function errorForStatus(status: number, fault: string | null, ctx: FailureContext): LeaseholdError {
  const what = `${ctx.method} ${ctx.path}`;
  const message = fault ?? `Ironic answered ${status} to ${what}`;
  const details = { ironic_status: status, ...(ctx.nodeId === undefined ? {} : { node: ctx.nodeId }) };
  if (isNodeLocked(status, fault)) return new NodeBusyError(message, { details });
  if (status === 404 && ctx.nodeId !== undefined) return new NotFoundError('node', ctx.nodeId, { details: { ironic_status: 404 } });
  if (status === 401 || status === 403) {
    // Leasehold's own credentials for Ironic are wrong: the backend is unusable, not the caller's request.
    return new BackendUnavailableError(`Ironic refused Leasehold's credentials (${status} to ${what}): check IRONIC_AUTH_TYPE and its credentials`, { details });
  }
  if (status === 404) return new BackendUnavailableError(`Ironic answered 404 to ${what}: is IRONIC_URL the Ironic API root?`, { details });
  if ((status === 400 || status === 409) && ctx.transition) return new InvalidStateError(message, { details });
  if (status >= 400 && status < 500) return new InvalidRequestError(message, { details });
  return new BackendUnavailableError(`Ironic failed (${status}) on ${what}: ${message}`, { details });
}
