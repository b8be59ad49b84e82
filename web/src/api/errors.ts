/** The one error shape of the API: {"error": {"code", "message", "details"}}. */
export interface ApiErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  const error = (value as ApiErrorBody | null)?.error;
  return typeof error === 'object' && error !== null && typeof error.message === 'string';
}

/**
 * The data of an openapi-fetch result, or an ApiError carrying the server's own message. Pages show that message
 * verbatim: the API's messages are written for people (e.g. an expression error names the position).
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) {
    const body = result.error;
    if (isErrorBody(body)) {
      throw new ApiError(result.response.status, body.error.code, body.error.message, body.error.details ?? {});
    }
    throw new ApiError(result.response.status, 'http_error', `The server answered ${result.response.status} ${result.response.statusText}`.trim());
  }
  return result.data as T;
}

/** A sentence for any failure: the server's message, or what went wrong reaching it. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return `Could not reach the Leasehold server (${err.message}).`;
  if (err instanceof Error) return err.message;
  return String(err);
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}
