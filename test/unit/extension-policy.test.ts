import { describe, expect, it } from 'vitest';
import { nextRenewal } from '../../src/domain/scheduling/renewal-step.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { leaseExtensionLimit, offerExtensionLimit, type ExtensionOffer } from '../../src/domain/scheduling/extension-policy.js';

const H = 3_600_000;
const D = 24 * H;
const T0 = new Date('2030-01-01T00:00:00Z');
const t = (ms: number) => new Date(T0.getTime() + ms);
const offer = (over: Partial<ExtensionOffer> = {}): ExtensionOffer => ({
  node_id: 'n1',
  start: T0,
  end: null,
  allowed_projects: null,
  max_lease_ms: 7 * D,
  extension_window_ms: null,
  extension_max_ahead_ms: null,
  max_total_ms: null,
  ...over,
});
const lease = { start: T0, end: t(7 * D) };

describe("an offer's extension policy", () => {
  it('without a window or horizon, an extension reaches the longest lease the offer allows (today)', () => {
    expect(offerExtensionLimit(offer(), lease, T0.getTime())).toMatchObject({ latest: t(7 * D).getTime(), rule: 'max_lease_length', window_open: true });
    expect(offerExtensionLimit(offer({ max_lease_ms: 10 * D }), lease, T0.getTime())).toMatchObject({ latest: t(10 * D).getTime(), rule: 'max_lease_length' });
  });

  it('Chameleon: within 48 h of the end, up to 7 days from now, never past 14 days in total', async () => {
    const clock = new ManualClock(T0);
    const chameleon = offer({ extension_window_ms: 2 * D, extension_max_ahead_ms: 7 * D, max_total_ms: 14 * D });
    expect(offerExtensionLimit(chameleon, lease, clock.now().getTime())).toMatchObject({
      latest: lease.end.getTime(),
      rule: 'extension_window',
      window_open: false,
      window_opens_at: t(5 * D).getTime(),
    });
    await clock.advanceTo(t(6 * D));
    expect(offerExtensionLimit(chameleon, lease, clock.now().getTime())).toMatchObject({ latest: t(13 * D).getTime(), rule: 'extension_max_ahead', window_open: true });
    await clock.advanceTo(t(12 * D));
    const extended = { start: T0, end: t(13 * D) };
    expect(offerExtensionLimit(chameleon, extended, clock.now().getTime())).toMatchObject({ latest: t(14 * D).getTime(), rule: 'max_total_length' });
  });

  it("a policy made stricter after booking never shortens a lease, it only stops extending it", () => {
    expect(offerExtensionLimit(offer({ max_lease_ms: D }), lease, T0.getTime()).latest).toBe(lease.end.getTime());
  });

  it('a lease is limited by its most limited node: the next booking on it, minus the cleaning gap', () => {
    const limit = leaseExtensionLimit({
      lease,
      projectId: 'p',
      nodes: [
        { id: 'n1', owned: false },
        { id: 'n2', owned: false },
      ],
      offersByNode: new Map([
        ['n1', [offer({ max_lease_ms: 30 * D })]],
        ['n2', [offer({ node_id: 'n2', max_lease_ms: 30 * D })]],
      ]),
      heldByNode: new Map([['n2', [{ node_id: 'n2', start: t(9 * D).getTime(), blockedUntil: t(10 * D).getTime() }]]]),
      gapMs: H,
      projectMaxLeaseMs: null,
      now: T0.getTime(),
    });
    expect(limit).toMatchObject({ latest: t(9 * D - H).getTime(), rule: 'next_booking', node_id: 'n2' });
  });

  it("the project's quota on a lease's length limits it too; a project's own node only by its bookings", () => {
    const limit = leaseExtensionLimit({
      lease,
      projectId: 'p',
      nodes: [{ id: 'n1', owned: true }],
      offersByNode: new Map(),
      heldByNode: new Map(),
      gapMs: 0,
      projectMaxLeaseMs: 8 * D,
      now: T0.getTime(),
    });
    expect(limit).toMatchObject({ latest: t(8 * D).getTime(), rule: 'project_max_lease_duration', node_id: null, window_open: true });
  });

  it('an offer that does not allow the project, or none at all, allows no extension', () => {
    const limit = leaseExtensionLimit({
      lease,
      projectId: 'p',
      nodes: [{ id: 'n1', owned: false }],
      offersByNode: new Map([['n1', [offer({ allowed_projects: ['q'] })]]]),
      heldByNode: new Map(),
      gapMs: 0,
      projectMaxLeaseMs: null,
      now: T0.getTime(),
    });
    expect(limit).toMatchObject({ latest: lease.end.getTime(), rule: 'offer_end' });
  });
});

describe('the next auto-renew step', () => {
  const renew = { step_ms: D, until: t(10 * D) };
  const open = { latest: Infinity, rule: null, node_id: null, window_open: true, window_opens_at: null };

  it('waits until at most one step is left, then adds a step', () => {
    expect(nextRenewal(lease, renew, open, t(5 * D))).toEqual({ kind: 'wait', at: t(6 * D) });
    expect(nextRenewal(lease, renew, open, t(6 * D))).toEqual({ kind: 'extend', end: t(8 * D) });
  });

  it("never renews past the lessee's limit, and is done once there", () => {
    expect(nextRenewal({ end: t(9 * D + H) }, renew, open, t(9 * D))).toEqual({ kind: 'extend', end: t(10 * D) });
    expect(nextRenewal({ end: t(10 * D) }, renew, open, t(9 * D + H))).toEqual({ kind: 'done' });
  });

  it('takes part of a step when a rule is nearer, and stops naming the rule once none is left', () => {
    const nearer = { ...open, latest: t(7 * D + H).getTime(), rule: 'next_booking' as const };
    expect(nextRenewal(lease, renew, nearer, t(6 * D))).toEqual({ kind: 'extend', end: t(7 * D + H) });
    const none = { ...open, latest: lease.end.getTime(), rule: 'max_total_length' as const };
    expect(nextRenewal(lease, renew, none, t(6 * D))).toEqual({ kind: 'stop', rule: 'max_total_length', latest: lease.end });
  });

  it('waits for a closed extension window instead of giving up', () => {
    const closed = { ...open, latest: lease.end.getTime(), rule: 'extension_window' as const, window_open: false, window_opens_at: t(6 * D + 12 * H).getTime() };
    expect(nextRenewal(lease, renew, closed, t(6 * D))).toEqual({ kind: 'wait', at: t(6 * D + 12 * H) });
  });
});
