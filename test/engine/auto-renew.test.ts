import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Offer } from '../../src/domain/leasing.js';
import { LeaseTimekeeper } from '../../src/engine/lease-timekeeper.js';
import { WebhookDispatcher } from '../../src/engine/webhook-dispatcher.js';
import { HOUR, NODE_IDS, T0, at, harness, silentLogger, type Harness } from './helpers.js';

const NODE = NODE_IDS[0]!;

describe('auto-renew', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  const offer = (over: Partial<Offer> = {}) =>
    h.store.leasing.createOffer(
      { node_id: NODE, project_id: h.ownerId, start: T0, end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null, ...over },
      [],
      h.clock.now(),
    );
  const keeper = () => new LeaseTimekeeper({ store: h.store, clock: h.clock, logger: silentLogger, renewer: () => h.leasing, noticeOffsetsMs: [] });
  const renewing = async (end: Date, step: number, until: Date) => {
    const lease = await h.createLease({ start: T0, end, nodes: [NODE] });
    await h.store.notices.setAutoRenew(lease.id, { step_ms: step, until }, [], h.clock.now());
    return lease;
  };
  const renewals = async (id: string) => (await h.events(id)).filter((e) => e.type.startsWith('lease.renew') || e.type === 'lease.auto_renew_done').map((e) => [e.type, e.details.to ?? e.details.rule ?? null]);

  it('extends the lease a step at a time, each step an event, until the limit the lessee set', async () => {
    await offer();
    const lease = await renewing(at(2 * HOUR), HOUR, at(4 * HOUR));
    await keeper().runOnce();
    expect((await h.lease(lease.id)).end).toEqual(at(2 * HOUR));
    await h.clock.advanceTo(at(HOUR));
    await keeper().runOnce();
    expect((await h.lease(lease.id)).end).toEqual(at(3 * HOUR));
    await h.clock.advanceTo(at(2 * HOUR));
    await keeper().runOnce();
    await h.clock.advanceTo(at(3 * HOUR));
    await keeper().runOnce();
    await keeper().runOnce();
    const done = await h.lease(lease.id);
    expect(done.end).toEqual(at(4 * HOUR));
    expect(done.auto_renew).toMatchObject({ state: 'done', rule: null });
    expect(await renewals(lease.id)).toEqual([
      ['lease.renewed', at(3 * HOUR).toISOString()],
      ['lease.renewed', at(4 * HOUR).toISOString()],
      ['lease.auto_renew_done', null],
    ]);
  });

  it('takes what is free before the next lease, then warns the lessee once, naming the booking', async () => {
    await offer();
    const lease = await renewing(at(2 * HOUR), HOUR, at(6 * HOUR));
    // Another lease on the node from 3h30 (the cleaning gap is 10 minutes).
    await h.createLease({ start: at(3.5 * HOUR), end: at(5 * HOUR), nodes: [NODE], project: h.otherLesseeId });
    await h.clock.advanceTo(at(HOUR));
    await keeper().runOnce();
    await h.clock.advanceTo(at(2.5 * HOUR));
    await keeper().runOnce();
    await keeper().runOnce();
    const after = await h.lease(lease.id);
    // Up to the next lease less the cleaning gap: a whole step, then what was left of one.
    const free = at(3.5 * HOUR - 10 * 60_000);
    expect(after.end).toEqual(free);
    expect(after.auto_renew).toMatchObject({ state: 'stopped', rule: 'next_booking' });
    expect(after.auto_renew?.message).toContain('another lease is booked');
    expect(await renewals(lease.id)).toEqual([
      ['lease.renewed', at(3 * HOUR).toISOString()],
      ['lease.renewed', free.toISOString()],
      ['lease.renewal_failed', 'next_booking'],
    ]);
  });

  it("stops at the offer's total limit with the rule, though each step was within the longest lease", async () => {
    await offer({ max_lease_ms: 2 * HOUR, max_total_ms: 3 * HOUR });
    const lease = await renewing(at(2 * HOUR), HOUR, at(8 * HOUR));
    await h.clock.advanceTo(at(HOUR));
    await keeper().runOnce();
    await h.clock.advanceTo(at(2 * HOUR));
    await keeper().runOnce();
    expect((await h.lease(lease.id)).end).toEqual(at(3 * HOUR));
    expect(await renewals(lease.id)).toEqual([
      ['lease.renewed', at(3 * HOUR).toISOString()],
      ['lease.renewal_failed', 'max_total_length'],
    ]);
  });

  it('two engines renew a lease once per step', async () => {
    await offer();
    const lease = await renewing(at(2 * HOUR), HOUR, at(6 * HOUR));
    await h.clock.advanceTo(at(HOUR));
    await Promise.all([keeper().runOnce(), keeper().runOnce(), keeper().runOnce()]);
    expect((await h.lease(lease.id)).end).toEqual(at(3 * HOUR));
    expect(await renewals(lease.id)).toEqual([['lease.renewed', at(3 * HOUR).toISOString()]]);
  });

  it('each renewal and the warning are webhooks', async () => {
    await offer({ max_lease_ms: 2 * HOUR, max_total_ms: 3 * HOUR });
    const sent: string[] = [];
    const fakeFetch = (async (_url: string | URL | Request, init?: RequestInit) => {
      sent.push(JSON.parse(String(init?.body)).type);
      return new Response(null, { status: 204 });
    }) as typeof fetch;
    const hooks = new WebhookDispatcher({ store: h.store, clock: h.clock, logger: silentLogger }, { url: 'http://hooks.invalid/', secret: 's', fetch: fakeFetch });
    await renewing(at(2 * HOUR), HOUR, at(8 * HOUR));
    await h.clock.advanceTo(at(HOUR));
    await keeper().runOnce();
    await h.clock.advanceTo(at(2 * HOUR));
    await keeper().runOnce();
    await hooks.runOnce();
    // Deliveries go out side by side: their order is not the point.
    expect(sent.sort()).toEqual(['lease.renewal_failed', 'lease.renewed']);
  });
});
