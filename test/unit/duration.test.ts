import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/domain/duration.js';
import { InvalidRequestError } from '../../src/domain/errors.js';

const H = 3_600_000;
const D = 24 * H;

describe('durations', () => {
  it.each([
    ['P3D', 3 * D],
    ['PT10M', 600_000],
    ['P1DT12H', 36 * H],
    ['P2W', 14 * D],
    ['PT0S', 0],
    ['PT1.5S', 1_500],
    ['p5d', 5 * D],
  ])('reads the ISO 8601 duration %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['3d', 3 * D],
    ['90m', 90 * 60_000],
    ['1h30m', 90 * 60_000],
    ['10s', 10_000],
    ['0s', 0],
    ['500ms', 500],
    ['1w', 7 * D],
    [' 5d ', 5 * D],
  ])('reads the short duration %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'P', 'PT', 'P1M', 'P1Y', '3 days', '3x', 'd3', '-1d', 'tomorrow', '1h 30m'])(
    'refuses %j with a message that shows the accepted forms',
    (text) => {
      expect(() => parseDuration(text, 'max_lease_duration')).toThrow(InvalidRequestError);
      expect(() => parseDuration(text, 'max_lease_duration')).toThrow(/max_lease_duration: .*P3D.*3d/);
    },
  );

  it.each([
    [3 * D, 'P3D'],
    [36 * H, 'P1DT12H'],
    [600_000, 'PT10M'],
    [0, 'PT0S'],
    [1_500, 'PT1.5S'],
  ])('writes %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
