import { describe, expect, it } from 'vitest';
import { PolicyViolationError } from '../../src/domain/errors.js';
import { checkQuota, quotaSpan } from '../../src/domain/scheduling/quota.js';
import { actualUse, calendarMonths, priceUnits, summarizeUsage, usagePerDay, type UsageSpan } from '../../src/domain/usage.js';

const T = (iso: string) => Date.parse(iso);
const H = 3_600_000;
const span = (over: Partial<UsageSpan> & Pick<UsageSpan, 'start' | 'end'>): UsageSpan => ({
  allocation_id: `a-${over.start}-${over.node_id ?? 'n1'}`,
  node_id: 'n1',
  node_name: 'node-1',
  project_id: 'p1',
  project_name: 'astro',
  owner_project_id: 'o1',
  owner_name: 'lab',
  resource_class: 'gpu',
  price_per_node_hour: null,
  currency: null,
  ...over,
});

describe('actual use of an allocation', () => {
  const base = { period_start: T('2030-01-01T01:00:00Z'), period_end: T('2030-01-01T05:00:00Z'), freed_before: null, blocked_by_previous: false };

  it('runs from the start to the end when nothing held the node before', () => {
    expect(actualUse(base, T('2030-01-02T00:00:00Z'))).toEqual({ start: base.period_start, end: base.period_end });
  });

  it('starts when the previous allocation let the node go, if that was after the start', () => {
    const freed = T('2030-01-01T02:30:00Z');
    expect(actualUse({ ...base, freed_before: freed }, T('2030-01-02T00:00:00Z'))).toEqual({ start: freed, end: base.period_end });
    expect(actualUse({ ...base, freed_before: T('2030-01-01T00:00:00Z') }, T('2030-01-02T00:00:00Z'))?.start).toBe(base.period_start);
  });

  it('is none while an earlier allocation still holds the node, and none when it was freed only after the end', () => {
    expect(actualUse({ ...base, blocked_by_previous: true }, T('2030-01-02T00:00:00Z'))).toBeNull();
    expect(actualUse({ ...base, freed_before: T('2030-01-01T06:00:00Z') }, T('2030-01-02T00:00:00Z'))).toBeNull();
  });

  it('ends when the engine dropped it (its node vanished), if that was before its end', () => {
    const dropped = T('2030-01-01T03:00:00Z');
    expect(actualUse({ ...base, dropped_at: dropped }, T('2030-01-02T00:00:00Z'))).toEqual({ start: base.period_start, end: dropped });
    expect(actualUse({ ...base, dropped_at: T('2030-01-01T00:00:00Z') }, T('2030-01-02T00:00:00Z'))).toBeNull();
  });

  it('ends at now while it runs, and is none before it starts', () => {
    expect(actualUse(base, T('2030-01-01T02:00:00Z'))).toEqual({ start: base.period_start, end: T('2030-01-01T02:00:00Z') });
    expect(actualUse(base, T('2030-01-01T00:30:00Z'))).toBeNull();
  });
});

describe('usage summaries', () => {
  const window = { start: T('2030-01-01T00:00:00Z'), end: T('2030-01-03T00:00:00Z') };

  it('clips each span to the window and counts the allocations with use inside it', () => {
    const spans = [
      span({ start: T('2029-12-31T22:00:00Z'), end: T('2030-01-01T02:00:00Z') }),
      span({ start: T('2030-01-02T23:00:00Z'), end: T('2030-01-03T05:00:00Z'), node_id: 'n2' }),
      span({ start: T('2030-01-04T00:00:00Z'), end: T('2030-01-05T00:00:00Z'), node_id: 'n3' }),
    ];
    const { groups, total } = summarizeUsage(spans, window, 'project');
    expect(groups).toEqual([{ key: 'p1', name: 'astro', node_seconds: 3 * 3600, node_hours: 3, allocations: 2, charges: [] }]);
    expect(total.node_seconds).toBe(3 * 3600);
  });

  it('keeps charges per currency, exact to the cent, rounded half up', () => {
    const spans = [
      span({ start: 0, end: 90 * 60_000, price_per_node_hour: '2.5', currency: 'EUR' }),
      span({ start: 0, end: H, price_per_node_hour: '0.0050', currency: 'EUR', node_id: 'n2' }),
      span({ start: 0, end: 2 * H, price_per_node_hour: '3', currency: 'USD', node_id: 'n3' }),
    ];
    const { total } = summarizeUsage(spans, { start: 0, end: 10 * H }, 'project');
    // 1.5 h × 2.50 + 1 h × 0.005 = 3.755 → 3.76; USD apart.
    expect(total.charges).toEqual([{ currency: 'EUR', amount: '3.76' }, { currency: 'USD', amount: '6.00' }]);
  });

  it('groups by owner, resource class or node, most used first', () => {
    const spans = [
      span({ start: 0, end: H, resource_class: 'cpu', node_id: 'n2', node_name: 'node-2' }),
      span({ start: 0, end: 2 * H }),
    ];
    expect(summarizeUsage(spans, { start: 0, end: 10 * H }, 'resource_class').groups.map((g) => [g.key, g.node_hours])).toEqual([['gpu', 2], ['cpu', 1]]);
    expect(summarizeUsage(spans, { start: 0, end: 10 * H }, 'node').groups.map((g) => g.name)).toEqual(['node-1', 'node-2']);
    expect(summarizeUsage(spans, { start: 0, end: 10 * H }, 'owner').groups).toMatchObject([{ key: 'o1', name: 'lab', node_hours: 3, allocations: 2 }]);
  });

  it('splits use over UTC days for the chart, every day of the window listed', () => {
    const days = usagePerDay([span({ start: T('2030-01-01T20:00:00Z'), end: T('2030-01-02T02:00:00Z') })], window, 'project');
    expect(days).toEqual([
      { date: '2030-01-01', node_hours: { p1: 4 } },
      { date: '2030-01-02', node_hours: { p1: 2 } },
    ]);
  });

  it('reads prices as 1/10,000 units', () => {
    expect(priceUnits('2.5')).toBe(25_000n);
    expect(priceUnits('0.0001')).toBe(1n);
    expect(priceUnits(null)).toBeNull();
  });
});

describe('the monthly node-hour budget', () => {
  const jan = { start: T('2030-01-01T00:00:00Z'), end: T('2030-02-01T00:00:00Z') };

  it('lists the calendar months a window touches', () => {
    expect(calendarMonths({ start: T('2030-01-31T23:00:00Z'), end: T('2030-03-01T00:00:01Z') }).map((m) => new Date(m.start).toISOString().slice(0, 7))).toEqual(['2030-01', '2030-02', '2030-03']);
  });

  it('reads the whole months a window touches when a budget is set, the window only for max_nodes', () => {
    const window = { start: T('2030-01-10T00:00:00Z'), end: T('2030-01-11T00:00:00Z') };
    expect(quotaSpan({ max_node_hours: 5 }, window)).toEqual(jan);
    expect(quotaSpan({ max_nodes: 5 }, window)).toEqual(window);
    expect(quotaSpan({}, window)).toBeNull();
  });

  it('allows exactly the budget and refuses a second more, naming the month and what remains', () => {
    const held = [{ start: T('2030-01-05T00:00:00Z'), end: T('2030-01-05T06:00:00Z') }];
    const window = { start: T('2030-01-10T00:00:00Z'), end: T('2030-01-10T02:00:00Z') };
    expect(() => checkQuota({ max_node_hours: 10 }, { window, nodes: 2, held })).not.toThrow();
    const more = { ...window, end: window.end + 1000 };
    expect(() => checkQuota({ max_node_hours: 10 }, { window: more, nodes: 2, held })).toThrow(PolicyViolationError);
    const refusal = (() => {
      try {
        checkQuota({ max_node_hours: 10 }, { window: more, nodes: 2, held, projectName: 'astro' });
      } catch (err) {
        return err as PolicyViolationError;
      }
      return null;
    })();
    expect(refusal?.details).toMatchObject({ rule: 'quota.max_node_hours', month: '2030-01', booked_node_hours: 6, remaining_node_hours: 4 });
    expect(refusal?.message).toContain('astro may book at most 10 node-hours in 2030-01');
  });

  it("counts held time of other months in their own month only", () => {
    const held = [{ start: T('2030-01-31T14:00:00Z'), end: T('2030-02-01T04:00:00Z') }];
    const window = { start: T('2030-02-01T04:00:00Z'), end: T('2030-02-01T10:00:00Z') };
    expect(() => checkQuota({ max_node_hours: 10 }, { window, nodes: 1, held })).not.toThrow();
    expect(() => checkQuota({ max_node_hours: 9 }, { window, nodes: 1, held })).toThrow(/2030-02/);
  });
});
