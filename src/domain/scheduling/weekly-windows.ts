import { InvalidRequestError } from '../errors.js';
import { merge, type Interval } from './interval.js';

/**
 * Recurring weekly windows of an offer (issue 17): an owner who uses its nodes by day offers them only at night and
 * at weekends. Pure: rules are parsed and validated here, and expanded to UTC intervals in the offer's timezone
 * (an IANA name) with the offsets Intl gives, so the windows follow daylight-saving changes.
 *
 * A rule is `DAYS [HH:MM-HH:MM]`: DAYS is a day (`mon` … `sun`), a range (`mon-fri`, `fri-mon` wraps over the
 * week's end), a comma-separated list of those, or `daily`; the times are local, and an end at or before the start
 * runs into the next day (`mon-fri 18:00-08:00`: each weekday evening until the next morning, so Friday's runs into
 * Saturday). Without times the whole day (`sat-sun` = `sat-sun 00:00-24:00`). The day of a rule is the day its window
 * starts. Windows that touch or overlap are one (Friday 18:00 to Monday 08:00 with the two rules above).
 */

export const Weekday = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 } as const;
export type Weekday = (typeof Weekday)[keyof typeof Weekday];
const DAY_NAMES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

export interface WeeklyRule {
  /** The days on which a window starts, Monday = 0, sorted, no repeats. */
  readonly days: readonly Weekday[];
  /** Local minutes after midnight, 0 … 1439. */
  readonly start: number;
  /** Local minutes after midnight, 1 … 1440; at or before `start`: on the next day. */
  readonly end: number;
}

export interface WeeklySchedule {
  readonly rules: readonly WeeklyRule[];
  /** IANA name, canonical as Intl resolves it (e.g. "UTC", "Europe/Berlin"). */
  readonly timezone: string;
}

/** More rules than a week has meaningful windows is a mistake, and each one costs at every expansion. */
export const MAX_WEEKLY_RULES = 14;
export const MAX_RULE_LENGTH = 64;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

function refuse(message: string, field: string): never {
  throw new InvalidRequestError(message, { details: { field } });
}

function parseDays(text: string, field: string, rule: string): Weekday[] {
  if (text === 'daily') return [0, 1, 2, 3, 4, 5, 6];
  const days = new Set<Weekday>();
  for (const item of text.split(',')) {
    const [from, to, extra] = item.split('-');
    const a = DAY_NAMES.indexOf(from as (typeof DAY_NAMES)[number]);
    const b = to === undefined ? a : DAY_NAMES.indexOf(to as (typeof DAY_NAMES)[number]);
    if (a < 0 || b < 0 || extra !== undefined) {
      refuse(`${field}: ${JSON.stringify(rule)}: days are mon, tue, wed, thu, fri, sat, sun, ranges such as mon-fri, lists such as sat,sun, or daily`, field);
    }
    for (let d = a; ; d = (d + 1) % 7) {
      days.add(d as Weekday);
      if (d === b) break;
    }
  }
  return [...days].sort((x, y) => x - y);
}

function parseTime(text: string, field: string, rule: string, isEnd: boolean): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(text);
  const hours = m ? Number(m[1]) : NaN;
  const minutes = m ? Number(m[2]) : NaN;
  const value = hours * 60 + minutes;
  if (!m || minutes > 59 || hours > 24 || value > 1440 || (value === 1440 && !isEnd)) {
    refuse(`${field}: ${JSON.stringify(rule)}: times are HH:MM from 00:00 to 23:59 (24:00 as an end)`, field);
  }
  return value;
}

/** One rule from its text (case and spaces forgiven); a 400 naming `field` and the rule when it is not one. */
export function parseWeeklyRule(text: string, field = 'weekly'): WeeklyRule {
  if (text.length > MAX_RULE_LENGTH) refuse(`${field}: a rule has at most ${MAX_RULE_LENGTH} characters`, field);
  const parts = text.trim().toLowerCase().split(/\s+/);
  if (parts.length > 2 || parts[0] === '') {
    refuse(`${field}: ${JSON.stringify(text)} is not a weekly rule; write DAYS [HH:MM-HH:MM], e.g. "mon-fri 18:00-08:00" or "sat-sun"`, field);
  }
  const days = parseDays(parts[0]!, field, text);
  if (parts[1] === undefined) return { days, start: 0, end: 1440 };
  const times = parts[1].split('-');
  if (times.length !== 2) refuse(`${field}: ${JSON.stringify(text)}: the times are a range HH:MM-HH:MM`, field);
  const start = parseTime(times[0]!, field, text, false);
  let end = parseTime(times[1]!, field, text, true);
  // 00:00 as an end is midnight after the start: the same as 24:00.
  if (end === 0) end = 1440;
  if (end === start) refuse(`${field}: ${JSON.stringify(text)} has no length; for whole days leave the times out`, field);
  return { days, start, end };
}

/** The timezone's canonical IANA name; a 400 when Intl does not know it. */
export function checkTimezone(name: string, field = 'timezone'): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return refuse(`${field}: ${JSON.stringify(name)} is not an IANA timezone (e.g. "UTC", "Europe/Berlin", "America/Chicago")`, field);
  }
}

/** A schedule from rule texts and a timezone (default UTC); at least one rule. */
export function parseWeeklySchedule(rules: readonly string[], timezone: string | undefined): WeeklySchedule {
  if (rules.length === 0) refuse('weekly: give at least one rule, e.g. "mon-fri 18:00-08:00"', 'weekly');
  if (rules.length > MAX_WEEKLY_RULES) refuse(`weekly: at most ${MAX_WEEKLY_RULES} rules`, 'weekly');
  return { rules: rules.map((r) => parseWeeklyRule(r)), timezone: checkTimezone(timezone ?? 'UTC') };
}

function formatDays(days: readonly Weekday[]): string {
  if (days.length === 7) return 'daily';
  // Runs of consecutive days; a run through Sunday into Monday is written as one wrapping range (sat-mon).
  const set = new Set(days);
  const first = ([0, 1, 2, 3, 4, 5, 6] as const).find((d) => set.has(d) && !set.has(((d + 6) % 7) as Weekday))!;
  const runs: string[] = [];
  for (let i = 0; i < 7; i++) {
    const d = (first + i) % 7;
    if (!set.has(d as Weekday) || set.has(((d + 6) % 7) as Weekday)) continue;
    let e = d;
    while (set.has(((e + 1) % 7) as Weekday) && (e + 1) % 7 !== d) e = (e + 1) % 7;
    runs.push(e === d ? DAY_NAMES[d]! : `${DAY_NAMES[d]}-${DAY_NAMES[e]}`);
  }
  return runs.join(',');
}

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/** A rule's canonical text (what is stored and shown): `mon-fri 18:00-08:00`, `sat-sun 00:00-24:00`. */
export function formatWeeklyRule(rule: WeeklyRule): string {
  return `${formatDays(rule.days)} ${hhmm(rule.start)}-${hhmm(rule.end)}`;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The timezone's offset from UTC at an instant (ms, local = UTC + offset), from Intl's wall-clock reading. */
export function zoneOffset(utcMs: number, timezone: string): number {
  if (timezone === 'UTC') return 0;
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(utcMs)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall - Math.floor(utcMs / 1000) * 1000;
}

/**
 * The instant a local wall-clock time (as ms of a UTC-like clock) names in `timezone`. A time repeated when the
 * clocks go back is its first occurrence; a time skipped when they go forward is moved on by the gap (02:30 on a
 * spring-forward night is 03:30) — the way calendars resolve both.
 */
export function localToUtc(localMs: number, timezone: string): number {
  const before = zoneOffset(localMs - DAY_MS, timezone);
  const after = zoneOffset(localMs + DAY_MS, timezone);
  if (before === after) return localMs - before;
  const early = localMs - before;
  const late = localMs - after;
  const earlyValid = zoneOffset(early, timezone) === before;
  const lateValid = zoneOffset(late, timezone) === after;
  if (earlyValid && lateValid) return Math.min(early, late);
  if (lateValid) return late;
  // Valid with the earlier offset, or in the gap: the earlier offset carries it past the gap.
  return early;
}

/** Expansions are asked for again and again (every node of a bulk offer shares its schedule): a small memo. */
const memo = new Map<string, readonly Interval[]>();
const MEMO_SIZE = 512;

/**
 * The schedule's windows overlapping `range` (finite), as merged UTC intervals clipped to it, sorted by start.
 */
export function expandWeekly(schedule: WeeklySchedule, range: Interval): readonly Interval[] {
  if (!Number.isFinite(range.start) || !Number.isFinite(range.end)) throw new RangeError('expandWeekly needs a finite range');
  if (range.end <= range.start) return [];
  const key = `${schedule.timezone}|${schedule.rules.map(formatWeeklyRule).join(';')}|${range.start}|${range.end}`;
  const cached = memo.get(key);
  if (cached) return cached;
  const raw: Interval[] = [];
  // A window starts at most a day (25 h on a fall-back night) before it reaches into the range: begin two local
  // days earlier, end a day after.
  const firstDay = Math.floor((range.start + zoneOffset(range.start, schedule.timezone)) / DAY_MS) * DAY_MS - 2 * DAY_MS;
  const lastDay = Math.floor((range.end + zoneOffset(range.end, schedule.timezone)) / DAY_MS) * DAY_MS + DAY_MS;
  for (let day = firstDay; day <= lastDay; day += DAY_MS) {
    const weekday = ((new Date(day).getUTCDay() + 6) % 7) as Weekday;
    for (const rule of schedule.rules) {
      if (!rule.days.includes(weekday)) continue;
      const localStart = day + rule.start * MINUTE_MS;
      const localEnd = day + rule.end * MINUTE_MS + (rule.end <= rule.start ? DAY_MS : 0);
      const start = Math.max(localToUtc(localStart, schedule.timezone), range.start);
      const end = Math.min(localToUtc(localEnd, schedule.timezone), range.end);
      if (end > start) raw.push({ start, end });
    }
  }
  const out = merge(raw);
  if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value!);
  memo.set(key, out);
  return out;
}

/** Whether `window` lies wholly inside one of the schedule's (merged) windows. */
export function weeklyCovers(schedule: WeeklySchedule, window: Interval): boolean {
  if (window.end <= window.start) return false;
  const inside = expandWeekly(schedule, window);
  return inside.length === 1 && inside[0]!.start === window.start && inside[0]!.end === window.end;
}

/**
 * The end of the schedule's window that `at` lies in, looking at most `limitMs` ahead (a window still open then
 * ends at `at + limitMs` as far as this can tell); `at` itself when it lies in none.
 */
export function weeklyRunEnd(schedule: WeeklySchedule, at: number, limitMs: number): number {
  // A week and a day first (a window of weekly rules ends within a week unless it never does), then twice as far:
  // an extension check does not expand a year of windows for a lease that ends tonight.
  for (let span = Math.min(8 * DAY_MS, limitMs); ; span = Math.min(span * 2, limitMs)) {
    const first = expandWeekly(schedule, { start: at, end: at + span })[0];
    if (!first || first.start !== at) return at;
    if (first.end < at + span || span >= limitMs) return first.end;
  }
}

/** A readable summary: "Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (Europe/Berlin)". */
export function describeWeekly(schedule: WeeklySchedule): string {
  const title = (d: string) => d.split(',').map((r) => r.split('-').map((x) => x[0]!.toUpperCase() + x.slice(1)).join('–')).join(', ');
  const parts = schedule.rules.map((r) => {
    const days = formatDays(r.days) === 'daily' ? 'Daily' : title(formatDays(r.days));
    if (r.start === 0 && r.end === 1440) return `${days} all day`;
    return `${days} ${hhmm(r.start)}–${hhmm(r.end)}${r.end <= r.start ? ' (next day)' : ''}`;
  });
  return `${parts.join(', ')} (${schedule.timezone})`;
}
