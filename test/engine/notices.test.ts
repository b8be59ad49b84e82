import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseTimekeeper } from '../../src/engine/lease-timekeeper.js';
import { WebhookDispatcher } from '../../src/engine/webhook-dispatcher.js';
import { HOUR, MINUTE, NODE_IDS, T0, at, harness, silentLogger, type Harness } from './helpers.js';

const DAY = 24 * HOUR;

describe('notices before a lease ends', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  const keeper = (offsets = [DAY, HOUR]) => new LeaseTimekeeper({ store: h.store, clock: h.clock, logger: silentLogger, renewer: () => null, noticeOffsetsMs: offsets });
  const notices = async (leaseId: string) =>
    (await h.events(leaseId)).filter((e) => e.type === 'lease.ending_soon').map((e) => ({ offset: e.details.offset, end: e.details.end, at: e.at.toISOString() }));

  it('each offset is sent once, at its instant before the end, however many engines look', async () => {
    const lease = await h.createLease({ start: T0, end: at(3 * DAY), nodes: [NODE_IDS[0]!] });
    await keeper().runOnce();
    await h.clock.advanceTo(at(2 * DAY - MINUTE));
    await keeper().runOnce();
    expect(await notices(lease.id)).toEqual([]);
    await h.clock.advanceTo(at(2 * DAY));
    // Two engines (replicas) at the same instant, twice each.
    await Promise.all([keeper().runOnce(), keeper().runOnce()]);
    await Promise.all([keeper().runOnce(), keeper().runOnce()]);
    await h.clock.advanceTo(at(3 * DAY - HOUR));
    await Promise.all([keeper().runOnce(), keeper().runOnce()]);
    await h.clock.advanceTo(at(3 * DAY - 1));
    await keeper().runOnce();
    const end = at(3 * DAY).toISOString();
    expect(await notices(lease.id)).toEqual([
      { offset: 'P1D', end, at: at(2 * DAY).toISOString() },
      { offset: 'PT1H', end, at: at(3 * DAY - HOUR).toISOString() },
    ]);
  });

  it('an extension re-arms the notices for the new end, and a notice already sent is sent again for it', async () => {
    const lease = await h.createLease({ start: T0, end: at(2 * DAY), nodes: [NODE_IDS[0]!] });
    await h.clock.advanceTo(at(DAY));
    await keeper().runOnce();
    await h.store.leasing.changeLeaseEnd(lease.id, at(3 * DAY), 0, [], h.clock.now());
    await keeper().runOnce();
    await h.clock.advanceTo(at(2 * DAY));
    await keeper().runOnce();
    await keeper().runOnce();
    expect((await notices(lease.id)).map((n) => [n.offset, n.end])).toEqual([
      ['P1D', at(2 * DAY).toISOString()],
      ['P1D', at(3 * DAY).toISOString()],
    ]);
  });

  it('an end moved back to where it was hears its notices again', async () => {
    const lease = await h.createLease({ start: T0, end: at(2 * DAY), nodes: [NODE_IDS[0]!] });
    await h.clock.advanceTo(at(DAY));
    await keeper().runOnce();
    await h.store.leasing.changeLeaseEnd(lease.id, at(3 * DAY), 0, [], h.clock.now());
    await h.store.leasing.changeLeaseEnd(lease.id, at(2 * DAY), 0, [], h.clock.now());
    await keeper().runOnce();
    expect((await notices(lease.id)).map((n) => n.offset)).toEqual(['P1D', 'P1D']);
  });

  it('a lease shortened past several offsets hears one notice, for the nearest, and none of them again', async () => {
    const lease = await h.createLease({ start: T0, end: at(3 * DAY), nodes: [NODE_IDS[0]!] });
    await h.store.leasing.changeLeaseEnd(lease.id, at(30 * MINUTE), 0, [], h.clock.now());
    await keeper().runOnce();
    await h.clock.advanceTo(at(20 * MINUTE));
    await keeper().runOnce();
    const events = (await h.events(lease.id)).filter((e) => e.type === 'lease.ending_soon');
    expect(events.map((e) => e.details)).toEqual([{ end: at(30 * MINUTE).toISOString(), offset: 'PT1H', ends_in: 'PT30M', covers: ['P1D', 'PT1H'] }]);
  });

  it('a lease that ended or was cancelled never hears a notice', async () => {
    const ended = await h.createLease({ start: T0, end: at(3 * DAY), nodes: [NODE_IDS[0]!] });
    const cancelled = await h.createLease({ start: at(4 * DAY), end: at(5 * DAY), nodes: [NODE_IDS[0]!] });
    await h.store.leasing.changeLeaseEnd(ended.id, at(MINUTE), 0, [], h.clock.now());
    await h.store.leasing.cancelLease(cancelled.id, [], h.clock.now());
    await h.clock.advanceTo(at(2 * MINUTE));
    await keeper().runOnce();
    await h.clock.advanceTo(at(4 * DAY + 23 * HOUR + 30 * MINUTE));
    await keeper().runOnce();
    expect(await notices(ended.id)).toEqual([]);
    expect(await notices(cancelled.id)).toEqual([]);
  });

  it("a project's own offsets replace the operator's", async () => {
    await h.store.updateProject(h.lesseeId, { notice_offsets_ms: [30 * MINUTE] }, h.clock.now());
    const lease = await h.createLease({ start: T0, end: at(2 * DAY), nodes: [NODE_IDS[0]!] });
    await h.clock.advanceTo(at(DAY));
    await keeper().runOnce();
    expect(await notices(lease.id)).toEqual([]);
    await h.clock.advanceTo(at(2 * DAY - 30 * MINUTE));
    await keeper().runOnce();
    expect((await notices(lease.id)).map((n) => n.offset)).toEqual(['PT30M']);
  });

  it('each notice is a signed webhook, once', async () => {
    const sent: string[] = [];
    const fakeFetch = (async (_url: string | URL | Request, init?: RequestInit) => {
      sent.push(JSON.parse(String(init?.body)).type);
      return new Response(null, { status: 204 });
    }) as typeof fetch;
    const hooks = new WebhookDispatcher({ store: h.store, clock: h.clock, logger: silentLogger }, { url: 'http://hooks.invalid/', secret: 's', fetch: fakeFetch });
    await h.createLease({ start: T0, end: at(2 * HOUR), nodes: [NODE_IDS[0]!] });
    await h.clock.advanceTo(at(HOUR));
    await keeper().runOnce();
    await keeper().runOnce();
    await hooks.runOnce();
    await hooks.runOnce();
    expect(sent).toEqual(['lease.ending_soon']);
  });
});
