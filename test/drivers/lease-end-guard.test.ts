import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { IronicDriver } from '../../src/drivers/ironic/ironic-driver.js';
import { CLEANING_GAP_MS, createProjectUser, startApp, type TestApp } from '../support/test-app.js';
import { FakeIronic, LOCKED, rawNode, uuid } from './fake-ironic.js';

/**
 * Issue 11, defect 3: a lessee's command sent in the last moments of its lease, retried on Ironic's 409 "node is
 * locked", must never reach Ironic after the lease's end; the caller gets the 404 any request after the end gets.
 * Ironic is a fake HTTP server that answers NodeLocked in Ironic's words and stamps each request with the manual
 * clock, so "after the end" is exact. The Ironic driver retries as configured in production (200 ms doubling,
 * capped at 3 s): attempts at end − 300 ms and end − 100 ms, the next one due at end + 300 ms.
 */

const NODE = uuid(1);
const RETRY = { attempts: 5, baseMs: 200, maxMs: 3_000 };

interface Harness extends TestApp {
  readonly fake: FakeIronic;
}

let h: Harness;
let lessee: { projectId: string; token: string };
let owner: { projectId: string; token: string };

/** The API on a socket, in front of the fake Ironic through the real Ironic driver (no simulated hardware). */
async function start(): Promise<Harness> {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  const fake = await new FakeIronic(clock).start();
  fake.add(rawNode(1, { name: 'gpu-01', owner: 'physics-lab', power_state: 'power on' }));
  const t = await startApp({
    nodes: [],
    clock,
    driver: ({ logger }) => new IronicDriver({ url: fake.url, auth: { type: 'none' }, clock, logger, retry: RETRY }),
    listen: true,
    console: { proxy: { pollMs: 500 } },
  });
  return {
    ...t,
    fake,
    async close() {
      await t.close();
      await fake.stop();
    },
  };
}

/** A lease of gpu-01 for the lessee, from now, for `duration`. */
async function lease(duration = '5m'): Promise<{ id: string; end: number }> {
  const res = await h.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['gpu-01'], duration } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, end: Date.parse(res.body.end) };
}

/** Real time: until `condition` holds (the fake received a request, a response came). */
async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Drives a call through its retries: Ironic answers "locked" to every `method path` request; the first attempt
 * arrives at end − 300 ms and the second, 200 ms later, at end − 100 ms (each awaited before the clock moves, so
 * their stamps are exact). Then the clock moves on in 50 ms steps, for up to 10 s of clock time, until the call
 * is answered, and 10 s more. Returns the answer and the times of the requests Ironic received.
 */
async function lockedThroughTheEnd<T>(
  method: string,
  path: RegExp,
  end: number,
  send: () => Promise<T>,
): Promise<{ answer: T; received: number[] }> {
  await h.clock.advanceTo(new Date(end - 300));
  h.fake.script((r) => r.method === method && path.test(r.path), 409, { fault: LOCKED(NODE), times: Infinity });
  const received = () => h.fake.requestsTo(method, path).map((r) => r.at);
  const got: { answer?: T } = {};
  const call = send().then((value) => (got.answer = value));
  await until(() => received().length === 1, 'the first attempt');
  await h.clock.advance(200);
  await until(() => received().length === 2, 'the second attempt');
  for (let spent = 0; !('answer' in got) && spent < 10_000; spent += 50) {
    await h.clock.advance(50);
    await new Promise((r) => setTimeout(r, 10));
  }
  const answer = await call;
  // Whatever answered the caller, nothing may still be on its way: the retries left would have come by now.
  for (let spent = 0; spent < 10_000; spent += 500) {
    await h.clock.advance(500);
    await new Promise((r) => setTimeout(r, 10));
  }
  return { answer, received: received() };
}

beforeEach(async () => {
  h = await start();
  owner = await createProjectUser(h, 'physics-lab', 'member');
  lessee = await createProjectUser(h, 'bio-lab', 'member');
  const offer = await h.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-01' } });
  expect(offer.status, JSON.stringify(offer.body)).toBe(201);
});

afterEach(async () => {
  await h?.close();
});

describe("a lessee's command retried on Ironic's 409 locked", () => {
  it('never reaches Ironic after the lease ends: REST power answers 404 like any request after the end', async () => {
    const { end } = await lease();
    const { answer, received } = await lockedThroughTheEnd('PUT', /\/states\/power$/, end, () =>
      h.request('POST', '/v1/nodes/gpu-01/power', { token: lessee.token, body: { action: 'on' } }),
    );
    expect(received).toEqual([end - 300, end - 100]);
    const after = await h.request('POST', '/v1/nodes/gpu-01/power', { token: lessee.token, body: { action: 'on' } });
    expect(after.status).toBe(404);
    expect(answer).toMatchObject({ status: 404, body: after.body });
    expect(h.fake.requestsTo('PUT', /\/states\/power$/)).toHaveLength(2);
  });

  it('never reaches Ironic after the lease ends: REST boot device answers 404', async () => {
    const { end } = await lease();
    const { answer, received } = await lockedThroughTheEnd('PUT', /\/management\/boot_device$/, end, () =>
      h.request('POST', '/v1/nodes/gpu-01/boot-device', { token: lessee.token, body: { device: 'pxe' } }),
    );
    expect(received).toEqual([end - 300, end - 100]);
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe('not_found');
  });

  for (const [name, path, body] of [
    ['PUT states/power', 'states/power', { target: 'power on' }],
    ['PUT states/provision (deploy)', 'states/provision', { target: 'active' }],
    ['PUT management/boot_device', 'management/boot_device', { boot_device: 'pxe' }],
  ] as const) {
    it(`never reaches Ironic after the lease ends: the gateway's ${name} answers Ironic's 404`, async () => {
      const { end } = await lease();
      const put = () =>
        h.request('PUT', `/baremetal/v1/nodes/gpu-01/${path}`, {
          token: null,
          headers: { 'x-auth-token': lessee.token, 'x-openstack-ironic-api-version': '1.82' },
          body,
        });
      const { answer, received } = await lockedThroughTheEnd('PUT', new RegExp(`/${path}$`), end, put);
      expect(received).toEqual([end - 300, end - 100]);
      const after = await put();
      expect(after.status).toBe(404);
      expect(answer).toMatchObject({ status: 404, body: after.body });
      expect(JSON.parse(answer.body.error_message).faultstring).toBe('node "gpu-01" not found');
    });
  }

  it('stops at once when the lease is ended early between attempts (another replica), answering 404', async () => {
    const { id } = await lease('1h');
    h.fake.script((r) => r.method === 'PUT', 409, { fault: LOCKED(NODE), times: Infinity });
    const got: { status?: number } = {};
    const call = h.request('POST', '/v1/nodes/gpu-01/power', { token: lessee.token, body: { action: 'off' } }).then((a) => (got.status = a.status));
    await until(() => h.fake.requestsTo('PUT', /.*/).length === 1, 'the first attempt');
    await h.clock.advance(100);
    // Straight in the store, as another replica's DELETE would: this process is not told.
    const endedAt = h.clock.now();
    await h.store.leasing.changeLeaseEnd(id, endedAt, CLEANING_GAP_MS, [], endedAt);
    await h.clock.advance(100); // the retry's time: it asks the lease table first
    await until(() => got.status !== undefined, 'the answer');
    await call;
    expect(got.status).toBe(404);
    expect(h.fake.requestsTo('PUT', /.*/).map((r) => r.at)).toEqual([endedAt.getTime() - 100]);
  });

  it("keeps retrying an owner's command past a lessee's lease end: the owner's access does not end with it", async () => {
    const { end } = await lease();
    await h.clock.advanceTo(new Date(end - 300));
    h.fake.script((r) => r.method === 'PUT', 409, { fault: LOCKED(NODE), times: 3 });
    const got: { status?: number } = {};
    const call = h.request('POST', '/v1/nodes/gpu-01/power', { token: owner.token, body: { action: 'off' } }).then((a) => (got.status = a.status));
    for (let spent = 0; got.status === undefined && spent < 10_000; spent += 50) {
      await h.clock.advance(50);
      await new Promise((r) => setTimeout(r, 10));
    }
    await call;
    expect(got.status).toBe(202);
    const times = h.fake.requestsTo('PUT', /.*/).map((r) => r.at);
    expect(times).toHaveLength(4);
    expect(times.at(-1)).toBeGreaterThan(end);
  });

  it('never turns the console on after the lease ends while Ironic answers locked; the connection ends with 4410', async () => {
    const { end } = await lease();
    h.fake.console = { console_enabled: false, console_info: null };
    const res = await h.request('POST', '/v1/nodes/gpu-01/console', { token: lessee.token });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const connect = () =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(res.body.url);
        ws.on('error', () => undefined);
        ws.on('close', (code) => resolve(code));
      });
    const { answer, received } = await lockedThroughTheEnd('PUT', /\/states\/console$/, end, connect);
    expect(received).toEqual([end - 300, end - 100]);
    expect(answer).toBe(4410);
    expect(h.fake.requests.filter((r) => r.method !== 'GET' && r.at >= end)).toEqual([]);
  });
});

describe("the gateway's paths", () => {
  // A name with a character the router leaves percent-encoded in the path (`+` as %2B) but decodes in the ident:
  // the sub-resource used to be found by searching the path for the decoded ident, and named `1/nodes/arm%2B01/...`.
  const ARM = uuid(2);
  beforeEach(async () => {
    h.fake.add(rawNode(2, { name: 'arm+01', owner: 'physics-lab' }));
    await h.inventory.syncAll();
  });

  it('names the path a project asked for in a refusal, even with the node spelled with percent-escapes', async () => {
    for (const ident of ['arm%2B01', ARM]) {
      const res = await h.request('DELETE', `/baremetal/v1/nodes/${ident}/bogus/thing`, { token: null, headers: { 'x-auth-token': owner.token } });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body.error_message).faultstring).toBe(
        "DELETE /v1/nodes/{node}/bogus/thing is not offered to projects through Leasehold's gateway",
      );
    }
  });

  it('forwards a request for a node spelled with percent-escapes to that node in Ironic', async () => {
    const res = await h.request('PUT', '/baremetal/v1/nodes/arm%2B01/states/power', {
      token: null,
      headers: { 'x-auth-token': owner.token },
      body: { target: 'power off' },
    });
    expect(res.status).toBe(202);
    expect(h.fake.requestsTo('PUT', /.*/).map((r) => r.path)).toEqual([`/v1/nodes/${ARM}/states/power`]);
  });
});
