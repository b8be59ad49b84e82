import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_DURATION_MS, parseDuration } from '../../src/domain/duration.js';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { EXPRESSION_LIMITS, parseExpression } from '../../src/domain/expression/parser.js';
import { checkWithinHorizon } from '../../src/domain/time-bounds.js';
import { translateDbError } from '../../src/store/db-errors.js';
import { FakeApi } from '../cli/helpers/fake-api.js';
import { runCli } from '../cli/helpers/cli-runner.js';
import { USER_ID } from '../cli/helpers/fixtures.js';

const DAY = 86_400_000;

describe('durations are bounded at 10 years', () => {
  it('accepts exactly P3653D, in either form', () => {
    expect(parseDuration('P3653D')).toBe(MAX_DURATION_MS);
    expect(parseDuration('3653d')).toBe(3653 * DAY);
  });

  it.each(['100000000d', 'P9999999999999D', '999999999h', '99999999999999999999d', 'P3654D', `${'9'.repeat(40)}s`])(
    'refuses %s as longer than 10 years, naming the field',
    (text) => {
      const err = (() => {
        try {
          parseDuration(text, 'max_lease_duration');
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).message).toMatch(/^max_lease_duration: .* longer than P3653D \(10 years\)/);
      expect((err as InvalidRequestError).details).toMatchObject({ field: 'max_lease_duration', max: 'P3653D' });
    },
  );
});

describe('requirement expressions are bounded in length and depth', () => {
  const nested = (levels: number) => `${'('.repeat(levels)}cpus >= 1${')'.repeat(levels)}`;

  it('parses 64 levels of parentheses and of "not"', () => {
    expect(() => parseExpression(nested(EXPRESSION_LIMITS.maxDepth))).not.toThrow();
    expect(() => parseExpression(`${'not '.repeat(64)}has X`)).not.toThrow();
  });

  it('refuses the 65th level of parentheses at its position, without overflowing the stack on 3,000', () => {
    expect(() => parseExpression(nested(65))).toThrow(/position 65: .*nested deeper than 64/);
    const err = (() => {
      try {
        parseExpression(nested(3000).slice(0, 4096));
      } catch (e) {
        return e as InvalidRequestError;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err!.details).toMatchObject({ position: 65 });
  });

  it('refuses "not" nested 65 times', () => {
    expect(() => parseExpression(`${'not '.repeat(65)}has X`)).toThrow(/position 257: .*nested deeper than 64/);
  });

  it('refuses an expression longer than 4,096 characters without echoing it back', () => {
    const source = `cpus >= 1${' and cpus >= 1'.repeat(400)}`;
    let message = '';
    try {
      parseExpression(source);
    } catch (e) {
      message = (e as Error).message;
      expect((e as InvalidRequestError).details).toMatchObject({ position: 4097, max_length: 4096 });
    }
    expect(message).toMatch(/longer than 4096 characters/);
    expect(message.length).toBeLessThan(200);
  });

  it('still parses a long flat expression within the bound', () => {
    const source = `cpus >= 1${' and cpus >= 1'.repeat(290)}`;
    expect(source.length).toBeLessThanOrEqual(4096);
    expect(() => parseExpression(source)).not.toThrow();
  });
});

describe('times that book something lie within 10 years of now', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  it('accepts the edges and refuses beyond them, naming the field', () => {
    expect(() => checkWithinHorizon(new Date(now.getTime() + MAX_DURATION_MS), now, 'end')).not.toThrow();
    expect(() => checkWithinHorizon(new Date(now.getTime() - MAX_DURATION_MS), now, 'start')).not.toThrow();
    expect(() => checkWithinHorizon(new Date('9999-12-31T00:00:00Z'), now, 'end')).toThrow(/^end: 9999-12-31.* more than P3653D \(10 years\) from now/);
    expect(() => checkWithinHorizon(new Date('1990-01-01T00:00:00Z'), now, 'start')).toThrow(/^start: .* is in the past/);
    expect(() => checkWithinHorizon(new Date(Number.NaN), now, 'start')).toThrow(InvalidRequestError);
  });
});

describe("PostgreSQL's data exceptions are a 400 as a backstop, without PostgreSQL's message", () => {
  it.each([
    ['22021', 'invalid byte sequence for encoding "UTF8": 0x00'],
    ['22P02', 'invalid input syntax for type uuid: "secret-value"'],
    ['22001', 'value too long for type character varying(64)'],
    ['22003', 'value "99999999999" is out of range for type integer'],
    ['22008', 'timestamp out of range'],
    ['54001', 'stack depth limit exceeded'],
  ])('%s', (code, message) => {
    const err = translateDbError(Object.assign(new Error(message), { code }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).message).not.toContain(message);
    expect((err as InvalidRequestError).details).toEqual({ sqlstate: code });
  });
});

describe("PostgreSQL's data exceptions of the server's own making stay internal errors", () => {
  it.each([
    ['22012', 'division by zero'],
    ['2201B', 'invalid regular expression'],
  ])('%s is not blamed on the caller', (code, message) => {
    const err = translateDbError(Object.assign(new Error(message), { code }));
    expect(err).not.toBeInstanceOf(InvalidRequestError);
  });
});

describe('the CLI refuses durations past 10 years before sending anything (exit 2)', () => {
  let api: FakeApi;
  beforeEach(async () => {
    api = await new FakeApi().start();
  });
  afterEach(() => api.stop());
  const cli = (...argv: string[]) =>
    runCli(argv, { LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: 'lh_test', LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });

  it.each(
    [
      ['token', 'create', '--user', USER_ID, '--expires-in', '100000000d'],
      ['token', 'create', '--user', USER_ID, '--expires-in', '99999999999999999999d'],
      ['lease', 'create', '--node', 'gpu-01', '--for', 'P9999999999999D'],
      ['lease', 'extend', '5f3c0000-0000-4000-8000-000000000000', '--by', '999999999h'],
      ['project', 'set', 'physics-lab', '--max-lease-duration', '99999999999999999999d'],
      ['offer', 'create', 'gpu-01', '--max-lease', '100000000d'],
    ].map((argv) => [argv.join(' '), argv] as const),
  )('leasehold %s', async (_, argv) => {
    const result = await cli(...argv);
    expect(result.code, result.stderr).toBe(2);
    expect(api.requests).toHaveLength(0);
  });
});
