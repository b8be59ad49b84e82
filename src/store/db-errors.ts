import {
  AlreadyExistsError,
  BackendUnavailableError,
  ConflictError,
  InvalidRequestError,
  isLeaseholdError,
  LeaseConflictError,
  NotFoundError,
} from '../domain/errors.js';

/** What both drivers put on a server error (pg's DatabaseError and PGlite's share these fields). */
interface PgErrorFields {
  readonly code?: unknown;
  readonly detail?: unknown;
  readonly table?: unknown;
  readonly constraint?: unknown;
  readonly message?: unknown;
}

/** Singular resource names for the tables, as NotFoundError and messages spell them. */
const RESOURCE: Readonly<Record<string, string>> = {
  projects: 'project',
  users: 'user',
  api_tokens: 'token',
  nodes: 'node',
};

/** Unique fields whose value must not travel back in a message (it would end up in responses and logs). */
const SECRET_FIELDS = new Set(['token_hash']);

/** Socket-level failures (Node's errno codes) that mean "the database is not reachable right now". */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);

/** SQLSTATEs of a server that is going away or refusing sessions: admin_shutdown, crash_shutdown,
 * cannot_connect_now, too_many_connections (08xxx, connection exceptions, are matched by class). */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** pg raises these without a code when a pooled connection dies or cannot be made in time. */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
  'Cannot use a pool after calling end',
  'PGlite is closed',
  // Kysely, once the store is closed (a request still running during shutdown).
  'driver has already been destroyed',
];

/**
 * PostgreSQL's data exceptions of a caller's value (SQLSTATE class 22) and "statement too complex" (54001): a value no column or
 * cast can hold — a NUL byte (22021), a non-uuid cast to uuid (22P02), an over-long string (22001), a number or
 * time out of range (22003, 22008). The API's request schemas refuse all of these first (src/api/schemas.ts);
 * this is the backstop that keeps one that slips through a 400 instead of a 500. PostgreSQL's own message is not
 * passed on: it can quote the value.
 */
const DATA_EXCEPTIONS: Readonly<Record<string, string>> = {
  '22001': 'a text value is too long',
  '22003': 'a number is out of range',
  '22007': 'a time is malformed',
  '22008': 'a time is out of range',
  '22021': 'a text value holds a character the database cannot store (such as NUL)',
  '22P02': 'a value has the wrong form (such as an id that is not a uuid)',
  '22P05': 'a text value holds a character the database cannot store',
  '54001': 'the request is too complex',
};

/**
 * Only the listed ones: the rest of class 22 (division by zero 22012, an invalid regular expression 2201B, ...)
 * comes from the server's own SQL, a bug to report as such (500), not the caller's value.
 */
function isDataException(code: unknown): code is string {
  return typeof code === 'string' && Object.hasOwn(DATA_EXCEPTIONS, code);
}

/**
 * Maps a database error to the domain's error hierarchy; anything it does not recognise is returned as is (a
 * bug, reported as internal). The message names the field and value, from the server's `detail`
 * ("Key (name)=(x) already exists.").
 */
export function translateDbError(err: unknown): unknown {
  if (isLeaseholdError(err)) return err;
  if (isConnectionError(err)) {
    return new BackendUnavailableError('the database is unreachable or too busy to answer in time; try again', { cause: err });
  }
  const e = (err ?? {}) as PgErrorFields;
  const table = typeof e.table === 'string' ? e.table : '';
  const resource = RESOURCE[table] ?? table;
  const detail = typeof e.detail === 'string' ? e.detail : '';
  switch (e.code) {
    case '23505': {
      const key = /^Key \((.+?)\)=\((.*)\) already exists/s.exec(detail);
      const field = key?.[1] ?? String(e.constraint ?? 'key');
      const value = SECRET_FIELDS.has(field) ? undefined : key?.[2];
      const what = `${resource} ${field}`.trim();
      const message = value === undefined ? `${what} is already taken` : `${what} ${JSON.stringify(value)} is already taken`;
      return new AlreadyExistsError(message, { cause: err, details: { resource, field, ...(value === undefined ? {} : { value }) } });
    }
    case '23503': {
      // Inserting a row that points nowhere: the referenced thing is missing.
      const missing = /^Key \((.+?)\)=\((.*)\) is not present in table "(.+?)"/s.exec(detail);
      if (missing) return new NotFoundError(RESOURCE[missing[3]!] ?? missing[3]!, missing[2]!, { cause: err });
      // Deleting a row something still points at.
      return new ConflictError(`${resource || 'the row'} is still referenced`, { cause: err });
    }
    case '23514':
    case '23502':
      // The store validates before writing; this is the schema's backstop for a value that slipped through.
      return new InvalidRequestError(`the ${resource || 'row'} violates ${String(e.constraint ?? 'a not-null rule')}`, {
        cause: err,
        details: { resource, constraint: e.constraint ?? null },
      });
    case '40P01':
    case '40001':
      // Two bookings inserting rows that the exclusion constraint compares can deadlock (each waits for the
      // other's uncommitted row); PostgreSQL aborts one. It lost the race like any other conflict: plan again.
      return new LeaseConflictError('a concurrent booking won the race for the same node; try again', { cause: err });
    case '23P01':
      if (e.constraint === 'offers_no_overlap' || e.constraint === 'offers_sub_no_overlap') {
        return new ConflictError('the offer overlaps another offer in force for the same node', {
          cause: err,
          details: { constraint: e.constraint },
        });
      }
      return new LeaseConflictError('the requested time overlaps an existing lease on the same node', { cause: err });
    default:
      if (isDataException(e.code)) {
        const reason = DATA_EXCEPTIONS[e.code] ?? 'a value is not valid';
        return new InvalidRequestError(`invalid request: ${reason} (SQLSTATE ${e.code})`, {
          cause: err,
          details: { sqlstate: e.code },
        });
      }
      return err;
  }
}

/** True for "cannot reach or lost the database", looking through `cause` (a wrapped migration error). */
export function isConnectionError(err: unknown): boolean {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const e = current as PgErrorFields & { cause?: unknown };
    const code = typeof e.code === 'string' ? e.code : '';
    if (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    const message = typeof e.message === 'string' ? e.message : '';
    if (UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
    // AggregateError (Node's happy-eyeballs connect to ::1 and 127.0.0.1) hides the codes in `errors`.
    if (current instanceof AggregateError && current.errors.some((inner) => isConnectionError(inner))) return true;
    current = e.cause;
  }
  return false;
}

/** Runs `fn`, turning database errors into the domain's: every store method goes through it. */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translateDbError(err);
  }
}
