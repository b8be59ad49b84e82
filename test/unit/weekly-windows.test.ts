import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/domain/errors.js';
import type { Offer } from '../../src/domain/leasing.js';
import { offerStarts } from '../../src/domain/scheduling/earliest-start.js';
import { offerCovers, offerIntervals, offerStretchEnd } from '../../src/domain/scheduling/offer-windows.js';
import {
  checkTimezone,
  describeWeekly,
  expandWeekly,
  formatWeeklyRule,
  localToUtc,
  parseWeeklyRule,
  parseWeeklySchedule,
  weeklyCovers,
  weeklyRunEnd,
} from '../../src/domain/scheduling/weekly-windows.js';

const H = 3_600_000;
const t = (iso: string) => Date.parse(iso);
const iv = (a: string, b: string) => ({ start: t(a), end: t(b) });
const show = (list: readonly { start: number; end: number }[]) => list.map((i) => [new Date(i.start).toISOString(), new Date(i.end).toISOString()]);
const nightsAndWeekends = (timezone?: string) => parseWeeklySchedule(['mon-fri 18:00-08:00', 'sat-sun'], timezone);

describe('parsing weekly rules', () => {
  it('reads days, ranges, lists and times, and writes them back canonical', () => {
    expect(parseWeeklyRule('mon-fri 18:00-08:00')).toEqual({ days: [0, 1, 2, 3, 4], start: 1080, end: 480 });
    expect(parseWeeklyRule('sat-sun')).toEqual({ days: [5, 6], start: 0, end: 1440 });
    expect(formatWeeklyRule(parseWeeklyRule('  SAT,Sun,mon  '))).toBe('sat-mon 00:00-24:00');
    expect(formatWeeklyRule(parseWeeklyRule('fri-mon 22:00-06:30'))).toBe('fri-mon 22:00-06:30');
    expect(formatWeeklyRule(parseWeeklyRule('mon,wed,fri 9:00-17:00'))).toBe('mon,wed,fri 09:00-17:00');
    expect(formatWeeklyRule(parseWeeklyRule('daily 00:00-00:00'.replace('00:00-00:00', '08:00-00:00')))).toBe('daily 08:00-24:00');
  });

  it.each([
    ['funday', 'days are'],
    ['mon-fri 25:00-26:00', 'times are HH:MM'],
    ['mon 10:60-11:00', 'times are HH:MM'],
    ['mon 24:00-02:00', 'times are HH:MM'],
    ['mon 10:00-10:00', 'has no length'],
    ['mon 10:00', 'a range HH:MM-HH:MM'],
    ['mon 10:00-11:00 extra', 'is not a weekly rule'],
    ['mon-tue-wed', 'days are'],
  ])('refuses %j with a 400 naming the field', (rule, message) => {
    let error: unknown;
    try {
      parseWeeklyRule(rule);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).message).toContain(message);
    expect((error as InvalidRequestError).details).toEqual({ field: 'weekly' });
  });

  it('defaults the timezone to UTC, canonicalises known ones and refuses unknown ones', () => {
    expect(parseWeeklySchedule(['sat-sun'], undefined).timezone).toBe('UTC');
    expect(checkTimezone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(() => checkTimezone('Mars/Olympus_Mons')).toThrow(/not an IANA timezone/);
    expect(() => parseWeeklySchedule([], 'UTC')).toThrow(/at least one rule/);
    expect(() => parseWeeklySchedule(Array(15).fill('mon'), 'UTC')).toThrow(/at most 14 rules/);
  });

  it('summarises a schedule for people', () => {
    expect(describeWeekly(nightsAndWeekends('Europe/Berlin'))).toBe('Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (Europe/Berlin)');
  });
});

describe('expanding weekly windows to UTC', () => {
  it('runs weeknights into the next morning and merges Friday night with the weekend into one window', () => {
    // 2026-03-02 is a Monday.
    const week = expandWeekly(nightsAndWeekends(), iv('2026-03-02T00:00:00Z', '2026-03-09T00:00:00Z'));
    expect(show(week)).toEqual([
      ['2026-03-02T18:00:00.000Z', '2026-03-03T08:00:00.000Z'],
      ['2026-03-03T18:00:00.000Z', '2026-03-04T08:00:00.000Z'],
      ['2026-03-04T18:00:00.000Z', '2026-03-05T08:00:00.000Z'],
      ['2026-03-05T18:00:00.000Z', '2026-03-06T08:00:00.000Z'],
      ['2026-03-06T18:00:00.000Z', '2026-03-09T00:00:00.000Z'],
    ]);
  });

  it('lets a Sunday window cross the week boundary into Monday, clipped to the range asked for', () => {
    const late = parseWeeklySchedule(['sun 22:00-02:00'], 'UTC');
    expect(show(expandWeekly(late, iv('2026-03-09T00:00:00Z', '2026-03-09T12:00:00Z')))).toEqual([
      ['2026-03-09T00:00:00.000Z', '2026-03-09T02:00:00.000Z'],
    ]);
    expect(show(expandWeekly(late, iv('2026-03-08T00:00:00Z', '2026-03-10T00:00:00Z')))).toEqual([
      ['2026-03-08T22:00:00.000Z', '2026-03-09T02:00:00.000Z'],
    ]);
  });

  it('keeps local times across the spring-forward night: the window of that night is an hour shorter', () => {
    // Europe/Berlin: 2026-03-29 02:00 CET becomes 03:00 CEST (01:00Z).
    const nights = parseWeeklySchedule(['daily 01:00-04:00'], 'Europe/Berlin');
    const got = expandWeekly(nights, iv('2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z'));
    expect(show(got)).toEqual([
      ['2026-03-28T00:00:00.000Z', '2026-03-28T03:00:00.000Z'],
      ['2026-03-29T00:00:00.000Z', '2026-03-29T02:00:00.000Z'],
      ['2026-03-29T23:00:00.000Z', '2026-03-30T02:00:00.000Z'],
      ['2026-03-30T23:00:00.000Z', '2026-03-31T00:00:00.000Z'],
    ]);
  });

  it('moves a time skipped by the clocks on by the gap, and takes the first of a time repeated', () => {
    // 02:30 does not exist in Berlin on 2026-03-29: it is 03:30 CEST (01:30Z).
    expect(new Date(localToUtc(t('2026-03-29T02:30:00Z'), 'Europe/Berlin')).toISOString()).toBe('2026-03-29T01:30:00.000Z');
    // 02:30 happens twice on 2026-10-25 (CEST, then CET): the first is 00:30Z.
    expect(new Date(localToUtc(t('2026-10-25T02:30:00Z'), 'Europe/Berlin')).toISOString()).toBe('2026-10-25T00:30:00.000Z');
  });

  it('makes the whole fall-back Sunday 25 hours long', () => {
    const sundays = parseWeeklySchedule(['sun'], 'Europe/Berlin');
    const [day] = expandWeekly(sundays, iv('2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z'));
    expect(show([day!])).toEqual([['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z']]);
    expect(day!.end - day!.start).toBe(25 * H);
  });

  it('follows the offset of the season: 09:00 in New York is 13:00Z in July and 14:00Z in January', () => {
    const office = parseWeeklySchedule(['mon 09:00-17:00'], 'America/New_York');
    expect(show(expandWeekly(office, iv('2026-07-06T00:00:00Z', '2026-07-07T00:00:00Z')))).toEqual([['2026-07-06T13:00:00.000Z', '2026-07-06T21:00:00.000Z']]);
    expect(show(expandWeekly(office, iv('2026-01-05T00:00:00Z', '2026-01-06T00:00:00Z')))).toEqual([['2026-01-05T14:00:00.000Z', '2026-01-05T22:00:00.000Z']]);
  });
});

describe('fitting a lease into weekly windows', () => {
  const schedule = nightsAndWeekends();

  it('covers a lease wholly inside one merged window and refuses one crossing its edge', () => {
    expect(weeklyCovers(schedule, iv('2026-03-06T20:00:00Z', '2026-03-08T20:00:00Z'))).toBe(true);
    // The rule's day is the day its window starts: Sunday has no night rule, so Monday 00:00-08:00 is not offered.
    expect(weeklyCovers(schedule, iv('2026-03-06T20:00:00Z', '2026-03-09T00:00:00Z'))).toBe(true);
    expect(weeklyCovers(schedule, iv('2026-03-06T20:00:00Z', '2026-03-09T08:00:00Z'))).toBe(false);
    expect(weeklyCovers(schedule, iv('2026-03-09T19:00:00Z', '2026-03-10T08:00:00Z'))).toBe(true);
    expect(weeklyCovers(schedule, iv('2026-03-10T07:00:00Z', '2026-03-10T09:00:00Z'))).toBe(false);
    expect(weeklyCovers(schedule, iv('2026-03-05T17:00:00Z', '2026-03-05T19:00:00Z'))).toBe(false);
  });

  it('tells where the window a lease lies in ends', () => {
    expect(new Date(weeklyRunEnd(schedule, t('2026-03-06T20:00:00Z'), 30 * 86_400_000)).toISOString()).toBe('2026-03-09T00:00:00.000Z');
    expect(weeklyRunEnd(schedule, t('2026-03-05T12:00:00Z'), 30 * 86_400_000)).toBe(t('2026-03-05T12:00:00Z'));
  });

  const offer = (over: Partial<Offer>): Offer => ({
    id: 'o', node_id: 'n', project_id: 'owner', start: new Date(t('2026-03-01T00:00:00Z')), end: null, max_lease_ms: null, min_lease_ms: null,
    allowed_projects: null, created_by: null, created_at: new Date(0), withdrawn_at: null, reclaim_notice_ms: null, extension_window_ms: null,
    extension_max_ahead_ms: null, max_total_ms: null, parent_allocation_id: null, weekly: schedule, ...over,
  });

  it('bounds an offer by its period as well as its weekly windows', () => {
    const o = offer({ end: new Date(t('2026-03-07T12:00:00Z')) });
    expect(offerCovers(o, iv('2026-03-06T20:00:00Z', '2026-03-07T10:00:00Z'))).toBe(true);
    expect(offerCovers(o, iv('2026-03-06T20:00:00Z', '2026-03-07T14:00:00Z'))).toBe(false);
    expect(new Date(offerStretchEnd(o, t('2026-03-06T20:00:00Z'))).toISOString()).toBe('2026-03-07T12:00:00.000Z');
    expect(show(offerIntervals(o, iv('2026-03-06T00:00:00Z', '2026-03-10T00:00:00Z')))).toEqual([
      ['2026-03-06T00:00:00.000Z', '2026-03-06T08:00:00.000Z'],
      ['2026-03-06T18:00:00.000Z', '2026-03-07T12:00:00.000Z'],
    ]);
    expect(offerStretchEnd(offer({ weekly: parseWeeklySchedule(['daily'], 'UTC') }), 0 + t('2026-03-02T00:00:00Z'))).toBe(Infinity);
  });

  it('lets a lease start only where it fits whole in a window (the earliest-start search)', () => {
    const starts = offerStarts([offer({})], 'lessee', 4 * H, false, iv('2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z'));
    expect(show(starts)).toEqual([['2026-03-02T18:00:00.000Z', '2026-03-03T00:00:00.000Z']]);
    expect(offerStarts([offer({})], 'lessee', 15 * H, false, iv('2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z'))).toEqual([]);
    expect(() => offerStarts([offer({})], 'lessee', H, false)).toThrow(RangeError);
  });
});
