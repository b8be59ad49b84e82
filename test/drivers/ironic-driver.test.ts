import type { Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import {
  BackendUnavailableError,
  InvalidRequestError,
  InvalidStateError,
  NodeBusyError,
  NotFoundError,
} from '../../src/domain/errors.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { createDriver } from '../../src/drivers/create-driver.js';
import { IronicDriver } from '../../src/drivers/ironic/ironic-driver.js';
import type { IronicAuth, RetryPolicy } from '../../src/drivers/ironic/ironic-driver.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { FakeIronic, LOCKED, SECRET, rawNode, uuid, type RawNode } from './fake-ironic.js';

const FAST_RETRY: RetryPolicy = { attempts: 3, baseMs: 1, maxMs: 2 };

const silent = createLogger('silent');
let fake: FakeIronic;
let drivers: IronicDriver[] = [];

function driverFor(options: { auth?: IronicAuth; retry?: RetryPolicy; timeoutMs?: number; url?: string; logs?: string[] } = {}): IronicDriver {
  const logger = options.logs
    ? createLogger('debug', new Writable({ write: (chunk, _enc, done) => void (options.logs?.push(String(chunk)), done()) }))
    : silent;
  const driver = new IronicDriver({
    url: options.url ?? fake.url,
    auth: options.auth ?? { type: 'none' },
    clock: systemClock,
    logger,
    retry: options.retry ?? FAST_RETRY,
    timeoutMs: options.timeoutMs,
  });
  drivers.push(driver);
  return driver;
}

describe('IronicDriver against a fake Ironic', () => {
  afterEach(async () => {
    for (const driver of drivers) await driver.close();
    drivers = [];
    await fake?.stop();
  });

  async function startFake(nodes: RawNode[] = [rawNode(1)]): Promise<FakeIronic> {
    fake = await new FakeIronic().start();
    fake.add(...nodes);
    return fake;
  }

  it('negotiates the microversion once, lazily, and sends it with every request', async () => {
    await startFake();
    const driver = driverFor();
    expect(fake.requests).toHaveLength(0);
    await driver.getNode(uuid(1));
    await driver.listNodes();
    await driver.setPowerState(uuid(1), 'power on');
    expect(fake.requestsTo('GET', '/')).toHaveLength(1);
    expect(fake.requests[0]?.path).toBe('/');
    for (const req of fake.requests.slice(1)) expect(req.headers['x-openstack-ironic-api-version']).toBe('1.82');
    expect(await driver.microversion()).toBe('1.82');
  });

  it('uses the server maximum when it is below 1.82, and refuses a server below 1.65', async () => {
    await startFake();
    fake.versions = { min: '1.1', max: '1.72' };
    const driver = driverFor();
    await driver.getNode(uuid(1));
    expect(fake.requests.at(-1)?.headers['x-openstack-ironic-api-version']).toBe('1.72');

    fake.versions = { min: '1.1', max: '1.58' };
    const old = driverFor();
    const err = await old.listNodes().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect(String((err as Error).message)).toMatch(/1\.65/);
    expect(fake.requestsTo('GET', '/v1/nodes')).toHaveLength(0);
  });

  it('accepts a URL ending in /v1 and takes the versions from the headers when the body has none', async () => {
    await startFake();
    fake.versionsInBody = false;
    fake.versions = { min: '1.1', max: '1.80' };
    const driver = driverFor({ url: `${fake.url}/v1/` });
    await driver.ping();
    expect(fake.requestsTo('GET', '/v1/drivers')).toHaveLength(1);
    expect(fake.requests.at(-1)?.headers['x-openstack-ironic-api-version']).toBe('1.80');
  });

  it('falls back to GET /v1 when GET / is not Ironic (a proxy forwarding /v1 only)', async () => {
    await startFake();
    fake.versions = { min: '1.1', max: '1.75' };
    fake.script((r) => r.path === '/', 404, { fault: 'no such path' });
    const driver = driverFor();
    await driver.getNode(uuid(1));
    expect(fake.requests.map((r) => r.path).slice(0, 3)).toEqual(['/', '/v1', `/v1/nodes/${uuid(1)}`]);
    expect(fake.requests.at(-1)?.headers['x-openstack-ironic-api-version']).toBe('1.75');
  });

  it('is BackendUnavailableError when Ironic refuses the credentials', async () => {
    await startFake();
    fake.script((r) => r.path !== '/', 401, { fault: 'Unauthorized', times: Infinity });
    const err = await driverFor({ auth: { type: 'token', token: 'stale' } }).ping().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as Error).message).toMatch(/credentials/);
    expect((err as Error).message).not.toContain('stale');
  });

  it('lists every page, following the next links on the configured URL', async () => {
    await startFake(Array.from({ length: 5 }, (_, i) => rawNode(i + 1)));
    fake.pageSize = 2;
    fake.publicBase = 'http://ironic.public.invalid:6385'; // must not be contacted
    const nodes = await driverFor().listNodes();
    expect(nodes.map((n) => n.name)).toEqual(['node-1', 'node-2', 'node-3', 'node-4', 'node-5']);
    const pages = fake.requestsTo('GET', '/v1/nodes');
    expect(pages).toHaveLength(3);
    expect(pages.map((p) => p.query.get('marker'))).toEqual([null, uuid(2), uuid(4)]);
    for (const page of pages) expect(page.query.get('limit')).toBe('1000');
  });

  it('maps Ironic node JSON to DriverNode', async () => {
    await startFake([rawNode(1, { extra: { lease: 'l-1' }, lessee: 'bio-lab', reservation: 'conductor-1', target_power_state: 'power on' })]);
    expect(await driverFor().getNode('node-1')).toEqual({
      uuid: uuid(1),
      name: 'node-1',
      resource_class: 'baremetal.gpu',
      owner: 'physics-lab',
      lessee: 'bio-lab',
      properties: { memory_mb: 65536, cpus: 32, cpu_arch: 'x86_64' },
      traits: ['CUSTOM_GPU'],
      extra: { lease: 'l-1' },
      power_state: 'power off',
      target_power_state: 'power on',
      provision_state: 'available',
      target_provision_state: null,
      maintenance: false,
      maintenance_reason: null,
      last_error: null,
      console_enabled: false,
      reservation: 'conductor-1',
      updated_at: '2026-11-21T06:00:00.123Z',
    });
  });

  it('never requests driver_info, and drops it when a response carries it anyway', async () => {
    await startFake([rawNode(1), rawNode(2)]);
    const driver = driverFor();
    const check = (value: unknown) => {
      expect(JSON.stringify(value)).not.toContain(SECRET);
      expect(JSON.stringify(value)).not.toContain('driver_info');
    };
    check(await driver.listNodes());
    check(await driver.getNode(uuid(1)));
    fake.leakDriverInfo = true;
    check(await driver.listNodes());
    check(await driver.getNode(uuid(1)));
    check(await driver.updateNode(uuid(1), { lessee: 'bio-lab' })); // a PATCH answer carries the whole node
    for (const req of fake.requests) {
      expect(req.url).not.toContain('driver_info');
      if (req.path.startsWith('/v1/nodes') && req.method === 'GET') {
        expect(req.query.get('fields')?.split(',')).toEqual(expect.arrayContaining(['uuid', 'lessee', 'traits', 'extra']));
      }
    }
  });

  it('patches owner, lessee and extra key by key, removing only keys that exist', async () => {
    await startFake([rawNode(1, { owner: 'physics-lab', lessee: null, extra: { a: '1', b: '2' } })]);
    const node = await driverFor().updateNode(uuid(1), {
      owner: null,
      lessee: 'bio-lab',
      extra: { a: null, missing: null, b: '2', c: '3', 'k/e~y': 'v' },
    });
    const patches = fake.requestsTo('PATCH', `/v1/nodes/${uuid(1)}`);
    expect(patches).toHaveLength(1);
    expect(patches[0]?.headers['content-type']).toBe('application/json');
    expect(patches[0]?.body).toEqual([
      { op: 'remove', path: '/owner' },
      { op: 'replace', path: '/lessee', value: 'bio-lab' },
      { op: 'remove', path: '/extra/a' },
      { op: 'add', path: '/extra/c', value: '3' },
      { op: 'add', path: '/extra/k~1e~0y', value: 'v' },
    ]);
    expect(node).toMatchObject({ owner: null, lessee: 'bio-lab', extra: { b: '2', c: '3', 'k/e~y': 'v' } });
  });

  it('sends nothing when an update changes nothing, and validates values first', async () => {
    await startFake([rawNode(1, { extra: { a: '1' } })]);
    const driver = driverFor();
    await driver.updateNode(uuid(1), { owner: 'physics-lab', extra: { a: '1', gone: null } });
    expect(fake.requestsTo('PATCH', /.*/)).toHaveLength(0);
    await expect(driver.updateNode(uuid(1), { owner: 'x'.repeat(256) })).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('sends power, boot device, console and provision requests as Ironic expects them', async () => {
    await startFake();
    const driver = driverFor();
    const id = uuid(1);
    await driver.setPowerState(id, 'rebooting');
    await driver.setBootDevice(id, 'pxe', true);
    await driver.setConsoleEnabled(id, true);
    await driver.setProvisionState(id, 'clean', { cleanSteps: [{ interface: 'deploy', step: 'erase_devices' }] });
    await driver.setProvisionState(id, 'manage');
    const puts = fake.requestsTo('PUT', /.*/).map((r) => [r.path, r.body]);
    expect(puts).toEqual([
      [`/v1/nodes/${id}/states/power`, { target: 'rebooting' }],
      [`/v1/nodes/${id}/management/boot_device`, { boot_device: 'pxe', persistent: true }],
      [`/v1/nodes/${id}/states/console`, { enabled: true }],
      [`/v1/nodes/${id}/states/provision`, { target: 'clean', clean_steps: [{ interface: 'deploy', step: 'erase_devices' }] }],
      [`/v1/nodes/${id}/states/provision`, { target: 'manage' }],
    ]);
    expect(await driver.getBootDevice(id)).toEqual({ boot_device: 'pxe', persistent: true });
    await expect(driver.setProvisionState(id, 'explode' as never)).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(driver.setPowerState(id, 'sideways' as never)).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('retries a 409 "node is locked" and succeeds when the lock is released', async () => {
    await startFake();
    fake.script((r) => r.method === 'PUT', 409, { fault: LOCKED(uuid(1)), times: 2 });
    await driverFor().setPowerState(uuid(1), 'power on');
    expect(fake.requestsTo('PUT', /.*/)).toHaveLength(3);
  });

  it('gives NodeBusyError when the node stays locked through every attempt', async () => {
    await startFake();
    fake.script((r) => r.method === 'PUT', 409, { fault: LOCKED(uuid(1)), times: Infinity });
    const err = await driverFor().setProvisionState(uuid(1), 'manage').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodeBusyError);
    expect((err as Error).message).toContain('is locked by host conductor-1');
    expect(fake.requestsTo('PUT', /.*/)).toHaveLength(FAST_RETRY.attempts);
  });

  it('waits between attempts on the injected clock, doubling the delay', async () => {
    await startFake();
    fake.script((r) => r.method === 'PUT', 409, { fault: LOCKED(uuid(1)), times: 3 });
    const clock = new ManualClock();
    const driver = new IronicDriver({ url: fake.url, auth: { type: 'none' }, clock, logger: silent, retry: { attempts: 4, baseMs: 100, maxMs: 150 } });
    drivers.push(driver);
    let done = false;
    const call = driver.setPowerState(uuid(1), 'power off').then(() => (done = true));
    const puts = () => fake.requestsTo('PUT', /.*/).length;
    await until(() => puts() === 1);
    await clock.advance(99);
    expect(puts()).toBe(1);
    await clock.advance(1);
    await until(() => puts() === 2);
    await clock.advance(149); // 200 ms capped at 150
    expect(puts()).toBe(2);
    await clock.advance(1);
    await until(() => puts() === 3);
    await clock.advance(150);
    await call;
    expect(done).toBe(true);
    expect(puts()).toBe(4);
  });

  it('maps 404 to NotFoundError and surfaces Ironic faultstrings', async () => {
    await startFake();
    const driver = driverFor();
    const unknown = '00000000-0000-4000-8000-00000000dead';
    await expect(driver.getNode(unknown)).rejects.toBeInstanceOf(NotFoundError);
    await expect(driver.setPowerState(unknown, 'power on')).rejects.toBeInstanceOf(NotFoundError);
    await expect(driver.updateNode(unknown, { lessee: 'x' })).rejects.toBeInstanceOf(NotFoundError);

    const refusal = `The requested action "provide" can not be performed on node "${uuid(1)}" while it is in state "available".`;
    fake.script((r) => r.path.endsWith('/states/provision'), 400, { fault: refusal });
    const state = await driver.setProvisionState(uuid(1), 'provide').catch((e: unknown) => e);
    expect(state).toBeInstanceOf(InvalidStateError);
    expect((state as Error).message).toBe(refusal);

    fake.script((r) => r.method === 'PUT' && r.path.endsWith('/states/console'), 409, { fault: 'Console already being changed' });
    await expect(driver.setConsoleEnabled(uuid(1), true)).rejects.toBeInstanceOf(InvalidStateError);

    fake.script((r) => r.method === 'PATCH', 400, { fault: "Invalid input for field/attribute lessee. Value: 7" });
    const bad = await driver.updateNode(uuid(1), { lessee: 'bio-lab' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidRequestError);
    expect((bad as Error).message).toContain('Invalid input for field/attribute lessee');
  });

  it('retries 503 and then gives BackendUnavailableError; other 5xx at once', async () => {
    await startFake();
    const driver = driverFor();
    fake.script((r) => r.path === `/v1/nodes/${uuid(1)}`, 503, { times: 1 });
    await expect(driver.getNode(uuid(1))).resolves.toMatchObject({ uuid: uuid(1) });
    fake.script((r) => r.path === `/v1/nodes/${uuid(1)}`, 503, { times: Infinity });
    await expect(driver.getNode(uuid(1))).rejects.toBeInstanceOf(BackendUnavailableError);
    expect(fake.requestsTo('GET', `/v1/nodes/${uuid(1)}`)).toHaveLength(1 + 1 + FAST_RETRY.attempts);
    fake.scripted.length = 0;
    fake.script((r) => r.path === '/v1/nodes', 500, { fault: 'database is locked' });
    const err = await driver.listNodes().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as Error).message).toContain('database is locked');
    expect(fake.requestsTo('GET', '/v1/nodes')).toHaveLength(1);
  });

  it('a ping (the /readyz probe) says unavailable after one attempt, without the backoff other calls get', async () => {
    await startFake();
    const driver = driverFor({});
    await driver.ping();
    fake.script((r) => r.path === '/v1/drivers', 503, { fault: 'conductor restarting' });
    const before = fake.requestsTo('GET', '/v1/drivers').length;
    await expect(driver.ping()).rejects.toBeInstanceOf(BackendUnavailableError);
    expect(fake.requestsTo('GET', '/v1/drivers').length - before).toBe(1);
  });

  it('is BackendUnavailableError when Ironic is down, and recovers when it comes back', async () => {
    await startFake();
    const url = fake.url;
    await fake.stop();
    const driver = driverFor({ url });
    await expect(driver.ping()).rejects.toBeInstanceOf(BackendUnavailableError);
    await expect(driver.listNodes()).rejects.toThrow(/unreachable/);
    fake = new FakeIronic();
    const port = Number(new URL(url).port);
    await new Promise<void>((resolve) => (fake as unknown as { server: Server }).server.listen(port, '127.0.0.1', resolve));
    fake.url = url;
    fake.add(rawNode(1));
    await expect(driver.ping()).resolves.toBeUndefined();
  });

  it('times out a request that gets no answer', async () => {
    await startFake();
    fake.script((r) => r.path === '/v1/drivers', 0, { hang: true });
    const err = await driverFor({ timeoutMs: 100 }).ping().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as Error).message).toMatch(/within 100 ms/);
  });

  it('close() aborts requests in flight and refuses new ones', async () => {
    await startFake();
    fake.script((r) => r.path === '/v1/drivers', 0, { hang: true });
    const driver = driverFor();
    const pending = driver.ping().catch((e: unknown) => e);
    await until(() => fake.requestsTo('GET', '/v1/drivers').length === 1);
    await driver.close();
    expect(await pending).toBeInstanceOf(BackendUnavailableError);
    await expect(driver.getNode(uuid(1))).rejects.toBeInstanceOf(BackendUnavailableError);
  });

  it('behind Keystone sends the service token with every request, and when Ironic refuses it, signs in again once and repeats the request', async () => {
    await startFake();
    const handed: string[] = [];
    const invalidated: string[] = [];
    let current = 'keystone-token-1';
    const tokens = {
      async token() {
        handed.push(current);
        return current;
      },
      invalidate(token: string) {
        invalidated.push(token);
        current = 'keystone-token-2';
      },
    };
    const driver = driverFor({ auth: { type: 'keystone', tokens } });
    await driver.listNodes();
    expect(new Set(fake.requests.map((r) => r.headers['x-auth-token']))).toEqual(new Set(['keystone-token-1']));

    // Keystone rotated its keys: Ironic answers 401 to the old token once.
    fake.script((r) => r.method === 'PUT' && r.headers['x-auth-token'] === 'keystone-token-1', 401, { times: Infinity });
    fake.requests.length = 0;
    await driver.setPowerState(uuid(1), 'power on');
    expect(invalidated).toEqual(['keystone-token-1']);
    expect(fake.requestsTo('PUT', /states\/power$/).map((r) => r.headers['x-auth-token'])).toEqual(['keystone-token-1', 'keystone-token-2']);

    // A token Ironic keeps refusing is not retried forever: the second 401 is the answer.
    fake.script((r) => r.method === 'PUT', 401, { times: Infinity });
    await expect(driver.setPowerState(uuid(1), 'power off')).rejects.toThrow();
    expect(invalidated).toHaveLength(2);
  });

  it('sends http_basic and token credentials, and never logs them', async () => {
    await startFake();
    const logs: string[] = [];
    fake.script((r) => r.method === 'PUT', 409, { fault: LOCKED(uuid(1)), times: 1 });
    await driverFor({ auth: { type: 'http_basic', username: 'leasehold', password: 'basic-secret' }, logs }).setPowerState(uuid(1), 'power on');
    const basic = fake.requests.filter((r) => r.path !== '/');
    for (const req of basic) expect(req.headers.authorization).toBe(`Basic ${Buffer.from('leasehold:basic-secret').toString('base64')}`);

    fake.requests.length = 0;
    await driverFor({ auth: { type: 'token', token: 'token-secret' }, logs }).listNodes();
    for (const req of fake.requests.filter((r) => r.path !== '/')) {
      expect(req.headers['x-auth-token']).toBe('token-secret');
      expect(req.headers.authorization).toBeUndefined();
    }
    fake.requests.length = 0;
    await driverFor().listNodes();
    for (const req of fake.requests) expect(req.headers.authorization ?? req.headers['x-auth-token']).toBeUndefined();

    const text = logs.join('');
    expect(text).toContain('retried'); // the logger did see the calls
    for (const secret of ['basic-secret', 'token-secret', SECRET, Buffer.from('leasehold:basic-secret').toString('base64')]) {
      expect(text).not.toContain(secret);
    }
  });

  it('reads the console and connects to a socat console over TCP', async () => {
    await startFake();
    const driver = driverFor();
    expect(await driver.getConsole(uuid(1))).toEqual({ enabled: false, info: null });
    await expect(driver.connectConsole(uuid(1))).rejects.toBeInstanceOf(InvalidStateError);

    const echo = createTcpServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const url = `tcp://127.0.0.1:${(echo.address() as AddressInfo).port}`;
      fake.console = { console_enabled: true, console_info: { type: 'socat', url } };
      expect(await driver.getConsole(uuid(1))).toEqual({ enabled: true, info: { type: 'socat', url } });
      const stream = await driver.connectConsole(uuid(1));
      const answer = new Promise<string>((resolve) => stream.once('data', (d: Buffer) => resolve(String(d))));
      stream.write('hello\r\n');
      expect(await answer).toBe('hello\r\n');
      stream.destroy();

      fake.console = { console_enabled: true, console_info: { type: 'shellinabox', url: 'http://127.0.0.1:4200' } };
      await expect(driver.connectConsole(uuid(1))).rejects.toThrow(/shellinabox/);
      fake.console = { console_enabled: true, console_info: {} }; // fake-hardware's `fake` console
      expect(await driver.getConsole(uuid(1))).toEqual({ enabled: true, info: null });
      await expect(driver.connectConsole(uuid(1))).rejects.toBeInstanceOf(InvalidStateError);
    } finally {
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    }
  });

  it('is what createDriver builds for LEASEHOLD_DRIVER=ironic', async () => {
    await startFake();
    const config = loadConfig({ LEASEHOLD_DRIVER: 'ironic', IRONIC_URL: fake.url, IRONIC_TIMEOUT: '2s' });
    const driver = createDriver(config, { clock: systemClock, logger: silent });
    expect(driver).toBeInstanceOf(IronicDriver);
    drivers.push(driver as IronicDriver);
    await expect(driver.listNodes()).resolves.toHaveLength(1);
  });
});

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}
