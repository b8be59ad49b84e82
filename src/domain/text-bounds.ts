import { InvalidRequestError } from './errors.js';

/*
 * Bounds on the text a client sends (issue 11: a NUL byte reached PostgreSQL and answered 500). The API's request
 * schemas (src/api/schemas.ts) are built from these; what arrives outside a schema is checked with them directly.
 */

/** Bounds on text fields: a name, id or filter value, and free text such as a description. */
export const TEXT_LIMITS = { name: 255, description: 1000 } as const;

/**
 * No control characters (U+0000-U+001F, U+007F-U+009F) and no unpaired UTF-16 surrogates (a surrogate only as
 * half of a pair). Written without the `u` flag and `\p{...}`, so the pattern in /openapi.json means the same to
 * any JSON Schema validator (a flag does not survive into the document).
 */
export const PRINTABLE = /^(?:[^\x00-\x1F\x7F-\x9F\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;
/** The same, but tab, line feed and carriage return are allowed (descriptions, expressions). */
export const PRINTABLE_LINES = /^(?:[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;
export const NOT_PRINTABLE = 'control characters (such as NUL) and unpaired surrogates are not allowed';

/**
 * The same test as IdOrName, for what arrives outside a request schema (the /baremetal gateway's node ident):
 * 1 to 255 characters (code points), printable.
 */
export function isIdOrName(value: string): boolean {
  const length = [...value].length;
  return length >= 1 && length <= TEXT_LIMITS.name && PRINTABLE.test(value);
}

/**
 * Refuses (400) a key that cannot name anything — a control character such as NUL, a lone surrogate, over 255
 * characters — before it reaches SQL, where PostgreSQL fails on it. For keys that come from outside the request
 * schemas: the /baremetal gateway's node ident.
 */
export function checkIdOrName(value: string, resource: string): void {
  if (!isIdOrName(value)) {
    throw new InvalidRequestError(`${JSON.stringify(value.slice(0, 300))} cannot be a ${resource} uuid or name`, {
      details: { field: resource, resource },
    });
  }
}
