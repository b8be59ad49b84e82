import { describe, expect, it } from 'vitest';
import { PolicyViolationError } from '../../src/domain/errors.js';
import { Role, type Principal } from '../../src/domain/identity.js';
import type { Offer } from '../../src/domain/leasing.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { NodePolicy } from '../../src/domain/policy-rules/node-policy.js';
import { planRepairs, type Holding } from '../../src/domain/reconcile.js';
import { assessNode, type AssessContext, type Held } from '../../src/domain/scheduling/assess.js';
import type { PlanNode } from '../../src/domain/inventory.js';
import {
  SUBLEASE_RULE,
  SubleaseRule,
  effectiveWindow,
  parentFor,
  subOfferWindow,
  subleaseAfterCut,
  subleaseRefusal,
  subleaseSubject,
  type HeldAllocation,
} from '../../src/domain/subleasing.js';

const H = 3_600_000;
const clock = new ManualClock('2030-01-01T00:00:00Z');
const t = (hours: number) => new Date(clock.now().getTime() + hours * H);
const held = (id: string, from: number, to: number, parent: string | null = null): HeldAllocation => ({ id, lease_id: `lease-${id}`, parent_allocation_id: parent, start: t(from), end: t(to) });
const member: Principal = { userId: 'u', userName: 'astro-member', role: Role.Member, projectId: 'astro', projectName: 'astro', tokenId: 't' };

describe('which allocation a sub-offer is carved from', () => {
  it('the one running now, else the earliest to come; with a start, the one whose window holds it', () => {
    const list = [held('later', 5, 8), held('now', -1, 2)];
    expect(parentFor(list, undefined, clock.now())?.id).toBe('now');
    expect(parentFor([held('later', 5, 8)], undefined, clock.now())?.id).toBe('later');
    expect(parentFor(list, t(6), clock.now())?.id).toBe('later');
    expect(parentFor(list, t(3), clock.now())).toBeNull();
    expect(parentFor([held('over', -3, -1)], undefined, clock.now())).toBeNull();
  });
});

describe("a sub-offer's window", () => {
  it('defaults to the rest of the parent allocation: from now (or its start, if later) to its end', () => {
    expect(subOfferWindow({ start: t(-1), end: t(4) }, {}, clock.now())).toEqual({ start: t(0), end: t(4) });
    expect(subOfferWindow({ start: t(2), end: t(4) }, {}, clock.now())).toEqual({ start: t(2), end: t(4) });
  });

  it('past the parent allocation (cut by a partial return or a replacement too) is refused naming the rule and the window allowed', () => {
    const refusal = () => subOfferWindow({ start: t(0), end: t(3) }, { end: t(5) }, clock.now());
    expect(refusal).toThrow(PolicyViolationError);
    expect(refusal).toThrow(/sublease_within_lease/);
    try {
      refusal();
    } catch (err) {
      expect((err as PolicyViolationError).details).toMatchObject({ rule: SubleaseRule.WithinLease, field: 'end', allowed: { end: t(3).toISOString() } });
    }
    expect(() => subOfferWindow({ start: t(1), end: t(3) }, { start: t(0.5) }, clock.now())).toThrow(/sublease_within_lease/);
  });

  it('is refused once the parent allocation is over, as time passes on the clock', async () => {
    const parent = { start: t(0), end: t(1) };
    const local = new ManualClock(clock.now());
    expect(subOfferWindow(parent, {}, local.now()).end).toEqual(t(1));
    await local.advance(H);
    expect(() => subOfferWindow(parent, {}, local.now())).toThrow(/nothing left to offer/);
  });
});

describe('where a sub-lessee has the node, and what a cut of its parent does', () => {
  it('only inside both windows', () => {
    expect(effectiveWindow({ start: t(0), end: t(3) }, { start: t(1), end: t(5) })).toEqual({ start: t(1), end: t(3) });
    expect(effectiveWindow({ start: t(0), end: t(1) }, { start: t(2), end: t(3) })).toBeNull();
  });

  it('a sub-lease not begun at the cut is dropped, one running past it is cut there, one over by then is kept', () => {
    const sub = { start: t(1), end: t(3) };
    expect(subleaseAfterCut(sub, t(0.5))).toBe('cancel');
    expect(subleaseAfterCut(sub, t(1))).toBe('cancel');
    expect(subleaseAfterCut(sub, t(2))).toBe('cut');
    expect(subleaseAfterCut(sub, t(3))).toBe('keep');
  });
});

describe('who may sub-offer (the policy rule)', () => {
  const policy = NodePolicy.defaults();
  it('a lessee member may; a lessee reader, a sub-lessee and a project holding nothing there may not', () => {
    expect(policy.allows(SUBLEASE_RULE, subleaseSubject(member, held('a', 0, 1), false))).toBe(true);
    expect(policy.allows(SUBLEASE_RULE, subleaseSubject({ ...member, role: Role.Reader }, held('a', 0, 1), false))).toBe(false);
    expect(policy.allows(SUBLEASE_RULE, subleaseSubject(member, held('a', 0, 1, 'parent'), false))).toBe(false);
    expect(policy.allows(SUBLEASE_RULE, subleaseSubject(member, null, false))).toBe(false);
  });

  it("a sub-lessee's refusal names the one-level rule; an operator may open sub-leasing to sub-lessees by overriding the rule", () => {
    expect(subleaseRefusal(member, held('a', 0, 1, 'parent'), 'gpu-1').details).toMatchObject({ rule: SubleaseRule.OneLevel });
    const open = NodePolicy.withOverrides({ [SUBLEASE_RULE]: 'rule:is_lessee_member' });
    expect(open.allows(SUBLEASE_RULE, subleaseSubject(member, held('a', 0, 1, 'parent'), false))).toBe(true);
  });
});

describe('planning a node with a sub-offer', () => {
  const node = { id: 'n1', name: 'gpu-1', owner_project: { id: 'owner', name: 'owner' }, maintenance: false, maintenance_reason: null, quarantined_at: null, provision_state: 'active' } as unknown as PlanNode;
  const offer = (over: Partial<Offer>): Offer => ({
    id: 'o', node_id: 'n1', project_id: 'owner', start: t(0), end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null,
    created_by: null, created_at: t(0), withdrawn_at: null, reclaim_notice_ms: null, parent_allocation_id: null,
    extension_window_ms: null, extension_max_ahead_ms: null, max_total_ms: null, ...over,
  });
  const parentHold: Held = { node_id: 'n1', start: t(0).getTime(), blockedUntil: t(4.2).getTime() };
  const ctx = (offers: Offer[], holds: Held[]): AssessContext => ({
    project: { id: 'geo', name: 'geo' }, now: t(0).getTime(), gapMs: 0.2 * H, offersByNode: new Map([['n1', offers]]), heldByNode: new Map([['n1', holds]]),
  });
  const win = (a: number, b: number) => ({ start: t(a).getTime(), end: t(b).getTime() });
  const sub = offer({ id: 's', project_id: 'astro', start: t(1), end: t(4), allowed_projects: ['geo'], parent_allocation_id: 'pa' });

  it('the parent lease does not make it busy for the sub-lessee, only other sub-leases do, with no cleaning gap after them', () => {
    expect(assessNode(node, win(1, 2), ctx([offer({}), sub], [parentHold]))).toBeNull();
    const other: Held = { node_id: 'n1', start: t(2).getTime(), blockedUntil: t(3).getTime(), sub: true };
    expect(assessNode(node, win(1, 2.5), ctx([sub], [parentHold, other]))?.kind).toBe('busy');
    expect(assessNode(node, win(1, 2), ctx([sub], [parentHold, other]))).toBeNull();
  });

  it("the owner's offer still sees the parent lease as busy, and a window past the sub-offer is the owner's policy to refuse", () => {
    expect(assessNode(node, win(1, 2), ctx([offer({})], [parentHold]))?.kind).toBe('busy');
    expect(assessNode(node, win(3, 5), ctx([offer({ allowed_projects: ['astro'] }), sub], [parentHold]))?.kind).toBe('policy');
  });
});

describe('reconciling a sub-leased node', () => {
  const holding = (over: Partial<Holding>): Holding => ({
    allocation_id: 'a', lease_id: 'parent', project_id: 'astro', node_id: 'n1', state: 'active', start: t(-1), end: t(5), lease_cancelled: false, node_maintenance_at: null, ...over,
  });
  const observed = (lessee: string | null, mark: string | null) => ({ id: 'n1', lessee, lease_mark: mark, maintenance: false, maintenance_reason: null }) as never;
  const both = [holding({}), holding({ allocation_id: 's', lease_id: 'sub', project_id: 'geo', start: t(-0.5), end: t(1), sublease: true })];

  it('the sub-lessee is the lessee Ironic should show while its sub-lease runs, the parent lessee after it', () => {
    expect(planRepairs([observed('geo', 'sub')], both, clock.now(), 60_000)).toEqual([]);
    expect(planRepairs([observed('astro', 'parent')], both, clock.now(), 60_000)[0]).toMatchObject({ kind: 'restore_lessee', holding: { lease_id: 'sub' } });
    expect(planRepairs([observed('astro', 'parent')], both, t(2), 60_000)).toEqual([]);
  });
});
