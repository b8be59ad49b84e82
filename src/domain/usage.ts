import type { Interval } from './scheduling/interval.js';

/**
 * Usage accounting (issue 17), pure. "Actual" use is the time a lessee had access to a node, as Leasehold decides
 * access (from the lease table, never from Ironic): from the later of the allocation's start and the instant its
 * node stopped being held back by an earlier allocation (an overrunning cleaning delays a start), to the
 * allocation's end as it stands (an early end, a return, a replacement or a reclaim cut it; an extension moves it).
 * An Ironic outage changes neither instant, so it cannot distort usage.
 */

export const USAGE_GROUPS = ['project', 'owner', 'resource_class', 'node'] as const;
export type UsageGroupBy = (typeof USAGE_GROUPS)[number];

/** A report covers at most 366 days: a calendar year, leap or not. */
export const MAX_USAGE_WINDOW_MS = 366 * 86_400_000;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Prices are kept to 4 decimals (numeric(14, 4)), so sums are exact in integers of 1/10,000. */
const PRICE_SCALE = 10_000n;

/** One allocation as the store reads it, before "actual" is decided. Times in epoch ms. */
export interface AllocationUse {
  readonly period_start: number;
  readonly period_end: number;
  /** The latest `freed_at` of the earlier allocations on the node that held it; null when there were none. */
  readonly freed_before: number | null;
  /** An earlier allocation on the node is still unfinished (its cleaning runs, or its node is quarantined). */
  readonly blocked_by_previous: boolean;
  /**
   * When the engine dropped the allocation (state `cancelled` while it held its node: the node vanished from
   * Ironic, or could not be handed over at all): access ended there. Null otherwise.
   */
  readonly dropped_at?: number | null;
}

/**
 * The instants access began and ended, as of `now` (a running allocation's use ends at `now` for now); null when
 * the lessee has had no access (not started yet, or its window passed while an earlier allocation held the node).
 */
export function actualUse(a: AllocationUse, now: number): Interval | null {
  if (a.blocked_by_previous) return null;
  const start = Math.max(a.period_start, a.freed_before ?? -Infinity);
  const end = Math.min(a.period_end, now, a.dropped_at ?? Infinity);
  return start < end ? { start, end } : null;
}

/** One allocation's actual use, with what it is counted under. */
export interface UsageSpan {
  readonly allocation_id: string;
  readonly node_id: string;
  readonly node_name: string | null;
  readonly project_id: string;
  readonly project_name: string | null;
  readonly owner_project_id: string | null;
  readonly owner_name: string | null;
  readonly resource_class: string | null;
  /** Decimal string per node-hour, with `currency` (ISO 4217), or both null. */
  readonly price_per_node_hour: string | null;
  readonly currency: string | null;
  readonly start: number;
  readonly end: number;
}

export interface Charge {
  readonly currency: string;
  /** Rounded half up to 2 decimals. */
  readonly amount: string;
}

export interface UsageGroup {
  readonly key: string | null;
  readonly name: string | null;
  readonly node_seconds: number;
  readonly node_hours: number;
  /** Allocations with some use inside the window. */
  readonly allocations: number;
  /** One per currency: amounts in different currencies are never added together. */
  readonly charges: readonly Charge[];
}

export interface UsageDay {
  /** YYYY-MM-DD (UTC). */
  readonly date: string;
  /** Node-hours of that day within the window, per group key ('' for none). */
  readonly node_hours: Readonly<Record<string, number>>;
}

export function clip(span: Interval, window: Interval): Interval | null {
  const start = Math.max(span.start, window.start);
  const end = Math.min(span.end, window.end);
  return start < end ? { start, end } : null;
}

export function groupKey(span: UsageSpan, by: UsageGroupBy): { readonly key: string | null; readonly name: string | null } {
  switch (by) {
    case 'project':
      return { key: span.project_id, name: span.project_name };
    case 'owner':
      return { key: span.owner_project_id, name: span.owner_name };
    case 'resource_class':
      return { key: span.resource_class, name: span.resource_class };
    case 'node':
      return { key: span.node_id, name: span.node_name };
  }
}

/** "2.5" → 25000n (1/10,000 units); null for no price. */
export function priceUnits(price: string | null): bigint | null {
  if (price === null) return null;
  const match = /^(\d+)(?:\.(\d{1,4})\d*)?$/.exec(price.trim());
  if (!match) throw new Error(`not a price: ${price}`);
  return BigInt(match[1]!) * PRICE_SCALE + BigInt((match[2] ?? '').padEnd(4, '0'));
}

/** Σ price-units × ms → an amount with 2 decimals, rounded half up. */
function amountOf(unitMs: bigint): string {
  const divisor = PRICE_SCALE * BigInt(HOUR_MS);
  const cents = (unitMs * 100n + divisor / 2n) / divisor;
  return `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;
}

/** Node-ms as node-hours, to 6 decimals (a millisecond is 2.8e-7 h: exact figures are `node_seconds`). */
export function nodeHoursOf(ms: number): number {
  return Math.round((ms / HOUR_MS) * 1e6) / 1e6;
}
const hours = nodeHoursOf;

interface Acc {
  key: string | null;
  name: string | null;
  ms: number;
  allocations: Set<string>;
  charges: Map<string, bigint>;
}

function newAcc(key: string | null, name: string | null): Acc {
  return { key, name, ms: 0, allocations: new Set(), charges: new Map() };
}

function add(acc: Acc, span: UsageSpan, ms: number): void {
  acc.ms += ms;
  acc.allocations.add(span.allocation_id);
  const price = priceUnits(span.price_per_node_hour);
  if (price !== null && span.currency !== null) acc.charges.set(span.currency, (acc.charges.get(span.currency) ?? 0n) + price * BigInt(ms));
}

function toGroup(acc: Acc): UsageGroup {
  return {
    key: acc.key,
    name: acc.name,
    node_seconds: acc.ms / 1000,
    node_hours: hours(acc.ms),
    allocations: acc.allocations.size,
    charges: [...acc.charges].sort(([a], [b]) => a.localeCompare(b)).map(([currency, units]) => ({ currency, amount: amountOf(units) })),
  };
}

/** Use within `window` per group (most used first) and in total. */
export function summarizeUsage(
  spans: readonly UsageSpan[],
  window: Interval,
  by: UsageGroupBy,
): { readonly groups: readonly UsageGroup[]; readonly total: UsageGroup } {
  const groups = new Map<string, Acc>();
  const total = newAcc(null, null);
  for (const span of spans) {
    const inside = clip(span, window);
    if (!inside) continue;
    const { key, name } = groupKey(span, by);
    const id = key ?? '';
    const acc = groups.get(id) ?? newAcc(key, name);
    groups.set(id, acc);
    if (acc.name === null) acc.name = name;
    add(acc, span, inside.end - inside.start);
    add(total, span, inside.end - inside.start);
  }
  const out = [...groups.values()].map(toGroup).sort((a, b) => b.node_seconds - a.node_seconds || (a.key ?? '').localeCompare(b.key ?? ''));
  return { groups: out, total: toGroup(total) };
}

/** Node-hours per UTC day of `window`, per group key: the chart's stacks. Every day of the window is listed. */
export function usagePerDay(spans: readonly UsageSpan[], window: Interval, by: UsageGroupBy): UsageDay[] {
  const first = Math.floor(window.start / DAY_MS) * DAY_MS;
  const days: Array<{ date: string; ms: Map<string, number> }> = [];
  for (let day = first; day < window.end; day += DAY_MS) days.push({ date: new Date(day).toISOString().slice(0, 10), ms: new Map() });
  for (const span of spans) {
    const inside = clip(span, window);
    if (!inside) continue;
    const id = groupKey(span, by).key ?? '';
    for (let day = Math.floor(inside.start / DAY_MS) * DAY_MS; day < inside.end; day += DAY_MS) {
      const part = clip(inside, { start: day, end: day + DAY_MS });
      if (!part) continue;
      const bucket = days[(day - first) / DAY_MS]!.ms;
      bucket.set(id, (bucket.get(id) ?? 0) + part.end - part.start);
    }
  }
  return days.map((d) => ({ date: d.date, node_hours: Object.fromEntries([...d.ms].map(([k, ms]) => [k, hours(ms)])) }));
}

/** The UTC calendar months [start, end) that `window` touches. */
export function calendarMonths(window: Interval): Interval[] {
  const months: Interval[] = [];
  const first = new Date(window.start);
  let start = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), 1);
  while (start < window.end) {
    const d = new Date(start);
    const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    months.push({ start, end });
    start = end;
  }
  return months;
}

/** Node-ms of `held` (each one node) and of `nodes` more over `window`, inside `month`. */
export function nodeMsIn(month: Interval, held: readonly Interval[], ask?: { readonly window: Interval; readonly nodes: number }): number {
  let ms = 0;
  for (const h of held) {
    const c = clip(h, month);
    if (c) ms += c.end - c.start;
  }
  if (ask) {
    const c = clip(ask.window, month);
    if (c) ms += (c.end - c.start) * ask.nodes;
  }
  return ms;
}


/** The CSV of a report (the API's and the CLI's): one line per group and currency (a group without prices: one line, currency and charge empty). */
export function usageCsv(by: UsageGroupBy, groups: readonly UsageGroup[]): string {
  const lines = ['group_by,key,name,node_hours,node_seconds,allocations,currency,charge'];
  for (const g of groups) {
    const head = [by, g.key ?? '', g.name ?? '', String(g.node_hours), String(g.node_seconds), String(g.allocations)].map(csvField);
    const charges = g.charges.length === 0 ? [{ currency: '', amount: '' }] : g.charges;
    for (const ch of charges) lines.push([...head, csvField(ch.currency), csvField(ch.amount)].join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** RFC 4180 quoting; a leading = + - @ is defused so a spreadsheet never runs a name as a formula. */
function csvField(value: string): string {
  const safe = /^[=+\-@]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
