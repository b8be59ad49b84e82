import { describe, expect, it } from 'vitest';
import type { AllocationState } from '../../src/domain/leasing.js';
import { planRepairs, type Holding, type ObservedNode } from '../../src/domain/reconcile.js';

const T = new Date('2030-01-01T12:00:00Z');
const at = (minutes: number) => new Date(T.getTime() + minutes * 60_000);
const GRACE = 15_000;

const node = (over: Partial<ObservedNode> = {}): ObservedNode => ({
  id: 'n1',
  lessee: null,
  lease_mark: null,
  maintenance: false,
  maintenance_reason: null,
  ...over,
});
const holding = (state: AllocationState, start: Date, end: Date, over: Partial<Holding> = {}): Holding => ({
  allocation_id: 'a1',
  lease_id: 'L1',
  project_id: 'P1',
  node_id: 'n1',
  state,
  start,
  end,
  lease_cancelled: false,
  node_maintenance_at: null,
  ...over,
});
const kinds = (nodes: ObservedNode[], holdings: Holding[], now = T) => planRepairs(nodes, holdings, now, GRACE).map((r) => r.kind);

describe('reconciliation plans', () => {
  it('nothing to repair when Ironic shows exactly the lessee of the active lease', () => {
    expect(kinds([node({ lessee: 'P1', lease_mark: 'L1' })], [holding('active', at(-10), at(10))])).toEqual([]);
  });

  it('a lessee set by hand on a node no lease holds is cleared, as set by hand', () => {
    const [repair] = planRepairs([node({ lessee: 'someone' })], [], T, GRACE);
    expect(repair).toMatchObject({ kind: 'clear_lessee', node_id: 'n1', found_lessee: 'someone', reason: 'no_lease', holding: null });
  });

  it('a lessee left behind by a lease that ended past the grace is cleared, naming the lease', () => {
    const h = holding('active', at(-10), at(-1));
    const [repair] = planRepairs([node({ lessee: 'P1', lease_mark: 'L1' })], [h], T, GRACE);
    expect(repair).toMatchObject({ kind: 'clear_lessee', reason: 'lease_over', found_lease_mark: 'L1', holding: h });
  });

  it('a lessee of a lease that ended moments ago is left to the end task', () => {
    const end = new Date(T.getTime() - GRACE + 1);
    expect(kinds([node({ lessee: 'P1', lease_mark: 'L1' })], [holding('releasing', at(-10), end)])).toEqual([]);
  });

  it('a lease mark without a lessee is cleared too', () => {
    expect(kinds([node({ lease_mark: 'L-old' })], [])).toEqual(['clear_lessee']);
  });

  it('an active lease whose lessee was changed or removed in Ironic gets it back', () => {
    const h = holding('active', at(-10), at(10));
    expect(planRepairs([node({ lessee: 'intruder', lease_mark: 'L1' })], [h], T, GRACE)[0]).toMatchObject({
      kind: 'restore_lessee',
      found_lessee: 'intruder',
      holding: h,
    });
    expect(kinds([node()], [h])).toEqual(['restore_lessee']);
  });

  it('a hand-over that is due or under way is left to the start task', () => {
    expect(kinds([node()], [holding('reserved', at(-1), at(10))])).toEqual([]);
    expect(kinds([node({ lessee: 'P1' })], [holding('starting', at(-1), at(10))])).toEqual([]);
  });

  it('a lessee set by hand on a node reserved for a later lease is cleared', () => {
    expect(kinds([node({ lessee: 'someone' })], [holding('reserved', at(5), at(10))])).toEqual(['clear_lessee']);
  });

  it('a lessee on a cancelled lease is cleared', () => {
    expect(kinds([node({ lessee: 'P1', lease_mark: 'L1' })], [holding('active', at(-10), at(10), { lease_cancelled: true })])).toEqual([
      'clear_lessee',
    ]);
  });

  it('an upcoming or running allocation whose node vanished from Ironic is dropped; a releasing one is left to the end task', () => {
    const repairs = planRepairs(
      [],
      [holding('active', at(-10), at(10)), holding('reserved', at(60), at(120), { allocation_id: 'a2' }), holding('releasing', at(-20), at(-5), { allocation_id: 'a3' })],
      T,
      GRACE,
    );
    expect(repairs.map((r) => [r.kind, 'holding' in r ? r.holding?.allocation_id : null])).toEqual([
      ['node_vanished', 'a1'],
      ['node_vanished', 'a2'],
    ]);
  });

  it('maintenance is announced once when it starts and once when it ends', () => {
    const h = holding('active', at(-10), at(10));
    const inMaintenance = node({ lessee: 'P1', lease_mark: 'L1', maintenance: true, maintenance_reason: 'fan' });
    expect(planRepairs([inMaintenance], [h], T, GRACE)[0]).toMatchObject({ kind: 'maintenance_started', reason: 'fan' });
    expect(kinds([inMaintenance], [{ ...h, node_maintenance_at: at(-1) }])).toEqual([]);
    expect(kinds([node({ lessee: 'P1', lease_mark: 'L1' })], [{ ...h, node_maintenance_at: at(-1) }])).toEqual(['maintenance_ended']);
  });

  it('maintenance of a node whose allocation is over or being released says nothing', () => {
    expect(kinds([node({ maintenance: true })], [holding('releasing', at(-10), at(-5))])).toEqual([]);
  });
});
