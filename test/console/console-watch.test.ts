import { afterEach, describe, expect, it } from 'vitest';
import { NodeBusyError } from '../../src/domain/errors.js';
import type { CallOptions, HardwareDriver } from '../../src/drivers/hardware-driver.js';
import type { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import type { Store } from '../../src/store/store.js';
import { CLEANING_GAP_MS, createProjectUser } from '../support/test-app.js';
import { connect, GPU, startConsoleServer, type ConsoleClient, type ConsoleServer } from './console-harness.js';

/**
 * Issue 11, defect 6: idle console connections must cost next to nothing. 200 of them, each re-checked on its own
 * every second (three queries each), took a whole core and slowed every request (`/v1/me` 5 ms → 0.2–1.3 s). All
 * open connections of a process are now re-checked together, one query each second whatever their number, and
 * connections are capped per console URL and per user (4429).
 */

let t: ConsoleServer;
let owner: { projectId: string; userId: string; token: string };
let lessee: { projectId: string; userId: string; token: string };

async function setup(options: Parameters<typeof startConsoleServer>[0] = {}) {
  t = await startConsoleServer(options);
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'bio-lab', 'member');
  const offer = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-01' } });
  expect(offer.status, JSON.stringify(offer.body)).toBe(201);
}

async function lease(duration = '1h'): Promise<{ id: string; end: string }> {
  const res = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['gpu-01'], duration } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function consoleUrl(token = lessee.token): Promise<{ id: string; url: string }> {
  const res = await t.request('POST', '/v1/nodes/gpu-01/console', { token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function opened(url: string): Promise<ConsoleClient> {
  const client = connect(url);
  await client.waitFor((out) => out.includes('login: '));
  return client;
}

/** Records every call to the store's methods (the store itself, its console and leasing parts): its queries. */
function recordQueries(store: Store): { readonly calls: string[] } {
  const calls: string[] = [];
  for (const part of [store, store.consoles, store.leasing] as object[]) {
    const names = new Set<string>();
    for (let proto = Object.getPrototypeOf(part); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const name of Object.getOwnPropertyNames(proto)) names.add(name);
    }
    for (const name of names) {
      const fn = (part as Record<string, unknown>)[name];
      if (name === 'constructor' || typeof fn !== 'function') continue;
      Object.defineProperty(part, name, {
        configurable: true,
        value: (...args: unknown[]) => {
          calls.push(name);
          return (fn as (...a: unknown[]) => unknown).apply(part, args);
        },
      });
    }
  }
  return { calls };
}

/** One re-check period of clock time, and the real time its check needs. */
async function oneSecond(): Promise<void> {
  await t.clock.advance(1_000);
  await new Promise((r) => setTimeout(r, 100));
}

afterEach(async () => {
  await t?.close();
});

describe('idle console connections', () => {
  it('are re-checked with one store query per second, however many are open', async () => {
    await setup();
    const { id } = await lease();
    await t.driver.setConsoleEnabled(GPU, true);
    await t.clock.advance(10);
    const clients: ConsoleClient[] = [];
    for (let i = 0; i < 2; i++) {
      const { url } = await consoleUrl();
      for (let j = 0; j < 3; j++) clients.push(await opened(url));
    }
    await oneSecond(); // the first re-check after they opened
    const queries = recordQueries(t.store);
    for (let second = 0; second < 3; second++) await oneSecond();
    // A check slower than the real time waited (a busy machine) runs late, not twice: wait for the third.
    for (const limit = Date.now() + 10_000; queries.calls.length < 3 && Date.now() < limit; ) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    expect(queries.calls).toEqual(['accessStates', 'accessStates', 'accessStates']);
    expect(clients.filter((c) => c.isClosed())).toEqual([]);

    // A lease shortened on another replica (straight in the store: this process is not told) still cuts them all.
    const now = t.clock.now();
    await t.store.leasing.changeLeaseEnd(id, now, CLEANING_GAP_MS, [], now);
    await oneSecond();
    const closed = await Promise.all(clients.map((c) => c.closed));
    expect(closed.map((c) => c.code)).toEqual(clients.map(() => 4410));
  });

  it('are all cut at the instant their lease ends, with one query', async () => {
    await setup();
    const { end } = await lease('5m');
    await t.driver.setConsoleEnabled(GPU, true);
    await t.clock.advance(10);
    const { url } = await consoleUrl();
    const { url: other } = await consoleUrl();
    const clients = [await opened(url), await opened(url), await opened(other)];
    await t.clock.advanceTo(new Date(Date.parse(end) - 1));
    await new Promise((r) => setTimeout(r, 100));
    const queries = recordQueries(t.store);
    await t.clock.advanceTo(end);
    const closed = await Promise.all(clients.map((c) => c.closed));
    expect(closed.map((c) => [c.code, c.reason])).toEqual(clients.map(() => [4410, `the lease ended at ${end}`]));
    // One re-check at the end for the three; then each end in the audit log.
    expect(queries.calls.filter((name) => name !== 'appendEvents')).toEqual(['accessStates']);
  });

  it('are closed at once on every token revoked on another replica within a second, each with 4401', async () => {
    await setup();
    await lease();
    await t.driver.setConsoleEnabled(GPU, true);
    await t.clock.advance(10);
    const first = await consoleUrl();
    const second = await consoleUrl();
    const [a, b, c] = [await opened(first.url), await opened(first.url), await opened(second.url)];
    await t.store.consoles.revoke(first.id, [], t.clock.now());
    await oneSecond();
    expect((await a.closed).code).toBe(4401);
    expect((await b.closed).code).toBe(4401);
    expect(c.isClosed()).toBe(false);
    c.ws.close();
  });
});

describe('the caps on console connections', () => {
  it('close the connection over the cap per console URL, and per user, with 4429 and a sentence', async () => {
    await setup({ session: { maxPerToken: 2, maxPerUser: 3 } });
    await lease();
    await t.driver.setConsoleEnabled(GPU, true);
    await t.clock.advance(10);
    const first = await consoleUrl();
    const a = await opened(first.url);
    await opened(first.url);
    const third = await connect(first.url).closed;
    expect(third).toMatchObject({ code: 4429, reason: 'too many connections: this console URL already has 2 open (at most 2); close one first' });

    const second = await consoleUrl();
    await opened(second.url);
    const fourth = await connect(second.url).closed;
    expect(fourth).toMatchObject({ code: 4429, reason: 'too many console connections: you already have 3 open (at most 3); close one first' });
    // The owner is another user: not counted with the lessee.
    (await opened((await consoleUrl(owner.token)).url)).ws.close();

    a.ws.close(1000);
    await a.closed;
    await new Promise((r) => setTimeout(r, 50));
    const again = await opened(second.url);
    expect(again.isClosed()).toBe(false);

    await new Promise((r) => setTimeout(r, 50));
    const events = await t.request('GET', `/v1/events?node_id=${GPU}&type=console.refused`, { token: lessee.token });
    expect(events.body.events.map((e: { details: { code: number } }) => e.details.code)).toEqual([4429, 4429]);
  });
});

describe('turning the console on', () => {
  it('asks the lease table before every attempt on a locked node: nothing reaches the driver after the lease ended', async () => {
    const calls: number[] = [];
    await setup({
      session: { pollMs: 300, recheckMs: 1_000 },
      // The node stays locked (Ironic's 409 NodeLocked): every turn-on is refused and tried again.
      wrapDriver: (driver: SimulatedDriver): HardwareDriver =>
        new Proxy(driver, {
          get(target, name, receiver) {
            if (name !== 'setConsoleEnabled') return Reflect.get(target, name, receiver);
            return async (_id: string, _enabled: boolean, _call?: CallOptions) => {
              calls.push(t.clock.now().getTime());
              throw new NodeBusyError(`Node ${GPU} is locked by host simulated-conductor, please retry after the current operation is completed.`);
            };
          },
        }),
    });
    const { id } = await lease();
    const start = t.clock.now().getTime();
    const client = connect((await consoleUrl()).url);
    const until = async (n: number) => {
      for (const limit = Date.now() + 10_000; calls.length < n; ) {
        if (Date.now() > limit) throw new Error(`${n} turn-on attempts expected, saw ${calls.length}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await until(1);
    await t.clock.advance(300);
    await until(2);
    await t.clock.advance(100);
    // The lease ends early at start + 400 ms, between two attempts, before the next re-check of open connections.
    expect((await t.request('DELETE', `/v1/leases/${id}`, { token: lessee.token })).status).toBe(200);
    await t.advanceUntil(() => client.isClosed(), 10_000, 100);
    expect((await client.closed).code).toBe(4410);
    await t.clock.advance(2_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toEqual([start, start + 300]);
  });
});
