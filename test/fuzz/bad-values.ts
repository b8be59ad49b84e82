import fc from 'fast-check';
import { typesOf, type JsonSchema } from './operations.js';

/*
 * Generators of values that are wrong for a field, whatever else the request holds: each arbitrary here yields only
 * values the API must refuse, so a request carrying one must be answered 4xx and change nothing. They follow the
 * field's JSON Schema from /openapi.json (type, bounds, enum, format) and a few field names whose meaning the schema
 * cannot say (durations, expressions, times that book something).
 */

/** Control characters, including NUL and C1 controls. */
const CONTROL = fc.constantFrom('\u0000', '\u0001', '\u0008', '\u000b', '\u001b', '\u001f', '\u007f', '\u0085', '\u009f');
/** Halves of a UTF-16 surrogate pair, alone. */
const LONE_SURROGATE = fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff');
const anyText = fc.string({ unit: 'grapheme', maxLength: 12 });

/**
 * Text holding a NUL, another control character or a lone surrogate: refused by every printable field. The two
 * bad pieces never touch: '\ud800' then '\udc00' would be one valid character (U+10000), not two lone halves (a CI
 * run drew exactly that and called the valid description it made "bad").
 */
export const hostileString = fc
  .tuple(anyText, fc.oneof(CONTROL, LONE_SURROGATE), anyText, fc.option(fc.oneof(CONTROL, LONE_SURROGATE), { nil: '' }))
  .map(([a, bad, b, more]) => `${a}${bad}${b || '.'}${more}`);

/**
 * The same for a URL, with control characters only: a lone surrogate cannot survive there (its percent-encoded
 * bytes are not UTF-8, so the server keeps the whole value undecoded, NUL and all, as literal percent signs).
 */
export const hostileUrlString = fc
  .tuple(anyText, CONTROL, anyText, fc.option(CONTROL, { nil: '' }))
  .map(([a, bad, b, more]) => `${a}${bad}${b}${more}`);

/** Numbers past any field's range (and past what JavaScript and PostgreSQL can hold). */
const hugeNumber = fc.oneof(
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER, 2 ** 31, 2 ** 63, -(2 ** 31) - 1),
  fc.double({ min: 1e7, max: 1e300, noNaN: true }),
  fc.double({ min: -1e300, max: -1, noNaN: true }),
);

/**
 * Deeply nested arrays or objects (a stack-depth attack on anything that recurses over a body). Kept as a marker
 * and written out by toJsonText: JSON.stringify itself overflows the stack past ~10,000 levels.
 */
export class Deep {
  constructor(
    readonly depth: number,
    readonly arrays: boolean,
  ) {}
  toText(): string {
    return this.arrays ? `${'['.repeat(this.depth)}"x"${']'.repeat(this.depth)}` : `${'{"a":'.repeat(this.depth)}"x"${'}'.repeat(this.depth)}`;
  }
}
export const deepNesting = fc.tuple(fc.integer({ min: 100, max: 50_000 }), fc.boolean()).map(([depth, arrays]) => new Deep(depth, arrays));

/** JSON text written as is: numbers JSON can carry but JavaScript cannot hold (`1e400` parses as Infinity). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a generated value, Deep and RawJson markers written out. */
export function toJsonText(value: unknown): string {
  if (value instanceof Deep) return value.toText();
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A value of none of the given JSON types. */
function wrongType(types: readonly string[]): fc.Arbitrary<unknown> {
  const byType: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.oneof(anyText, hostileString),
    number: hugeNumber,
    integer: hugeNumber,
    boolean: fc.boolean(),
    null: fc.constant(null),
    array: fc.oneof(fc.constant([]), fc.array(fc.oneof(anyText, fc.integer()), { maxLength: 3 }), deepNesting.map((v) => [v])),
    object: fc.oneof(fc.constant({}), fc.dictionary(anyText, anyText, { maxKeys: 3 }), deepNesting.map((v) => ({ v }))),
  };
  const allowed = new Set(types);
  if (allowed.has('number')) allowed.add('integer');
  if (allowed.has('integer')) allowed.add('number');
  const wrong = Object.entries(byType).filter(([type]) => !allowed.has(type));
  return fc.oneof(...wrong.map(([, arb]) => arb));
}

/** Times no field accepts: before 1970, past 9999 (an offset carries 9999-12-31 into 10000), or not RFC 3339. */
export const badTime = fc.oneof(
  fc.constantFrom(
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '1969-12-31T23:59:59Z',
    '9999-12-31T23:59:59-23:59',
    '+275760-09-13T00:00:00Z',
    '-271821-04-20T00:00:00Z',
    '2030-02-30T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '2030-01-01T00:00:00',
    '2030-01-01',
    'now',
    '1e400',
    'NaN',
    '',
  ),
  fc.integer({ min: 0, max: 1969 }).map((y) => `${String(y).padStart(4, '0')}-06-15T12:00:00Z`),
);

/** Times more than 10 years from the test clock's now (2030-01-01): refused where a time books something. */
export const farTime = fc.oneof(
  badTime,
  fc.integer({ min: 2041, max: 9999 }).map((y) => `${y}-01-01T00:00:00Z`),
  fc.integer({ min: 1970, max: 2019 }).map((y) => `${y}-01-01T00:00:00Z`),
);

/** Durations longer than 10 years (P3653D), negative, or not durations at all. */
export const badDuration = fc.oneof(
  fc.constantFrom('100000000d', 'P9999999999999D', '999999999h', '99999999999999999999d', 'P3654D', '-1d', 'P-1D', '1e400d', 'Infinityd', 'P1Y', '3 days', ''),
  fc.bigInt({ min: 3654n, max: 10n ** 30n }).map((n) => `${n}d`),
  fc.bigInt({ min: 3654n, max: 10n ** 30n }).map((n) => `P${n}D`),
  fc.bigInt({ min: 87_700n, max: 10n ** 30n }).map((n) => `${n}h`),
  fc.bigInt({ min: 522n, max: 10n ** 20n }).map((n) => `P${n}W`),
);

/** Expressions nested past 64 levels, longer than 4,096 characters, or unbalanced. */
export const badExpression = fc.oneof(
  fc.integer({ min: 65, max: 5000 }).map((n) => `${'('.repeat(n)}cpus >= 1${')'.repeat(n)}`),
  fc.integer({ min: 65, max: 3000 }).map((n) => `${'not '.repeat(n)}has CUSTOM_X`),
  fc.integer({ min: 4097, max: 20_000 }).map((n) => `cpus >= 1 and ${'x'.repeat(n)}`),
  fc.integer({ min: 1, max: 3000 }).map((n) => '('.repeat(n)),
  fc.constantFrom('cpus >=', 'and', 'memory >= 1QB', 'cpus >= "1', '"', ')', 'has', 'gpus >= 1 or'),
);

/** Text longer than `max` characters (code points, as zod and JSON Schema count; printable, so only the length is wrong). */
function tooLong(max: number): fc.Arbitrary<string> {
  return fc.tuple(fc.integer({ min: max + 1, max: max + 3000 }), fc.constantFrom('x', 'é', '\u{1F600}')).map(([n, c]) => c.repeat(n));
}

/**
 * A value the field described by `schema` must refuse. `name` is the property or parameter name, for what the
 * schema cannot say: durations, expressions and times that book something (within 10 years of now).
 */
export function badValueFor(schema: JsonSchema, name: string, where: 'body' | 'query'): fc.Arbitrary<unknown> | null {
  const types = typesOf(schema);
  const options: fc.Arbitrary<unknown>[] = [];
  const isString = types.includes('string');
  if (where === 'body' && types.length > 0) options.push(wrongType(types));
  if (isString) {
    if (schema.pattern !== undefined || schema.enum !== undefined || schema.format !== undefined) {
      options.push(where === 'query' ? hostileUrlString : hostileString);
    }
    if (schema.maxLength !== undefined) options.push(tooLong(schema.maxLength));
    if (schema.enum) options.push(anyText.filter((s) => !schema.enum!.includes(s)));
    if (schema.format === 'date-time') options.push(BOOKING_TIMES.has(name) && where === 'body' ? farTime : badTime);
    if (/duration/.test(name)) options.push(badDuration);
    if (name === 'where') options.push(badExpression);
  }
  if (types.includes('integer') || types.includes('number')) {
    const asQuery = (arb: fc.Arbitrary<number>) => (where === 'query' ? arb.map(String) : arb);
    if (schema.maximum !== undefined) options.push(asQuery(fc.oneof(fc.integer({ min: schema.maximum + 1 }), hugeNumber.filter((n) => n > schema.maximum!))));
    if (schema.minimum !== undefined) options.push(asQuery(fc.integer({ min: -(2 ** 31), max: schema.minimum - 1 })));
    if (types.includes('integer')) options.push(asQuery(fc.double({ min: 0.001, max: 999.999, noInteger: true })));
    if (where === 'query') options.push(fc.constantFrom('abc', '1e400', '-Infinity', 'NaN', '1,5', ''));
    // Infinity, -Infinity, and an integer past 2^53: no integer field takes them.
    if (where === 'body') options.push(fc.constantFrom(...['1e400', '-1e400', '123456789012345678901234567890'].map((t) => new RawJson(t))));
  }
  if (types.includes('boolean') && schema.const !== undefined) options.push(fc.constant(!schema.const));
  if (types.includes('array') && schema.items) {
    const item = badValueFor(schema.items, name, where);
    if (item) options.push(fc.array(item, { minLength: 1, maxLength: 3 }));
    if (schema.maxItems !== undefined) options.push(fc.constant(Array.from({ length: schema.maxItems + 1 }, () => 'x')));
  }
  if (types.includes('object') && schema.properties) {
    const object = badObject(schema);
    if (object) options.push(object);
  }
  // Nothing is surely wrong for an unconstrained field (a plain string parameter): it cannot carry the badness.
  return options.length === 0 ? null : fc.oneof(...options);
}

/** The times that book something: refused more than 10 years before or after now. */
const BOOKING_TIMES = new Set(['start', 'end', 'expires_at']);

/** An object its schema refuses: an unknown key, a required key missing, or a property with a bad value. */
export function badObject(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> | null {
  const props = Object.entries(schema.properties ?? {});
  const options: fc.Arbitrary<Record<string, unknown>>[] = [];
  if (schema.additionalProperties === false) {
    options.push(
      fc
        .tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'admin', 'role', 'id'), anyText), fc.jsonValue({ maxDepth: 3 }))
        .filter(([key]) => !Object.hasOwn(schema.properties ?? {}, key))
        // defineProperty: `{ __proto__: v }` would set the prototype instead of a key the server must refuse.
        .map(([key, v]) => Object.defineProperty({}, key, { value: v, enumerable: true, writable: true, configurable: true }) as Record<string, unknown>),
    );
  }
  if ((schema.required ?? []).length > 0) options.push(fc.constant({}));
  const badProps = props.flatMap(([key, prop]) => {
    const value = badValueFor(prop, key, 'body');
    return value ? [value.map((v) => ({ [key]: v }))] : [];
  });
  if (badProps.length > 0) options.push(fc.oneof(...badProps));
  return options.length === 0 ? null : fc.oneof(...options);
}
