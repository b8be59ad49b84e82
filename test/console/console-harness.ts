import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { WebSocket } from 'ws';
import { createApp } from '../../src/api/app.js';
import type { ApiDeps } from '../../src/api/context.js';
import { ConsoleProxy, type ConsoleProxyOptions } from '../../src/console/console-proxy.js';
import type { HardwareDriver } from '../../src/drivers/hardware-driver.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { NodePolicy } from '../../src/domain/policy-rules/node-policy.js';
import { fromValue } from '../../src/domain/tokens.js';
import { SimulatedDriver, type SimulatedNodeSpec } from '../../src/drivers/simulated/simulated-driver.js';
import { InventorySync } from '../../src/engine/inventory-sync.js';
import { createLogger } from '../../src/logger.js';
import { LeasePlanner } from '../../src/scheduler/lease-planner.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN_TOKEN, CLEANING_GAP_MS, type TestApp } from '../support/test-app.js';

export const GPU = '0b6a5c3e-5555-4eee-8eee-000000000001';
export const STORE = '0b6a5c3e-5555-4eee-8eee-000000000002';

/** Two physics-lab nodes, powered on (their getty is at the login prompt), consoles off. */
export function consoleInventory(): SimulatedNodeSpec[] {
  const bmc = { ipmi_address: '10.0.0.1', ipmi_password: 'bmc-secret-console' };
  return [
    { uuid: GPU, name: 'gpu-01', owner: 'physics-lab', power_state: 'power on', properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 }, driver_info: bmc },
    { uuid: STORE, name: 'store-01', owner: 'physics-lab', power_state: 'power on', properties: { memory_mb: 16384, cpus: 8, local_gb: 4000, cpu_arch: 'x86_64' }, driver_info: bmc },
  ];
}

export interface ConsoleServer extends TestApp {
  readonly url: string;
  readonly proxy: ConsoleProxy;
  /** Moves the manual clock in small steps until `done()` or `limitMs` of clock time (the proxy polls on it). */
  advanceUntil(done: () => boolean, limitMs?: number, stepMs?: number): Promise<void>;
}

/**
 * The API and the console proxy on a real HTTP server (127.0.0.1, a free port) over in-memory PGlite, simulated
 * hardware and a manual clock: what start-server wires, without the engine (access comes from the lease table).
 */
export async function startConsoleServer(
  options: {
    nodes?: SimulatedNodeSpec[];
    tokenTtlMs?: number;
    session?: Partial<ConsoleProxyOptions>;
    /** What the API and the proxy use as the driver, around the simulated one (`driver` stays the simulated one). */
    wrapDriver?: (driver: SimulatedDriver) => HardwareDriver;
    publicUrl?: string;
    /** Where the JSON log lines go (debug level); none: silent. */
    logTo?: NodeJS.WritableStream;
  } = {},
): Promise<ConsoleServer> {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  const logger = options.logTo ? createLogger('debug', options.logTo) : createLogger('silent');
  const store: Store = await openStore({ dataDir: 'memory://' });
  const admin = fromValue(ADMIN_TOKEN);
  await store.bootstrapAdmin({ userName: 'admin', token: { token_hash: admin.hash, prefix: admin.prefix } }, clock.now());
  const driver = new SimulatedDriver({
    nodes: options.nodes ?? consoleInventory(),
    clock,
    timings: { powerMs: 10, cleanMs: 10, deployMs: 10, undeployMs: 10, manageMs: 10, consoleMs: 10, bootOutputMs: 0 },
  });
  const inventory = new InventorySync({ driver, store, clock, logger, intervalMs: 3_600_000 });
  await inventory.syncAll();
  const planner = new LeasePlanner(store, clock, { cleaningGapMs: CLEANING_GAP_MS });
  const deps: ApiDeps = {
    store,
    driver: options.wrapDriver ? options.wrapDriver(driver) : driver,
    inventory,
    clock,
    logger,
    planner,
    cleaningGapMs: CLEANING_GAP_MS,
    policy: NodePolicy.defaults(),
  };
  const proxy = new ConsoleProxy(deps, options.session);
  const app = createApp({
    ...deps,
    console: { tokenTtlMs: options.tokenTtlMs ?? 600_000, publicUrl: options.publicUrl ?? null, connections: proxy },
  });
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  proxy.attach(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    proxy,
    store,
    driver,
    clock,
    inventory,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined = opts.rawBody;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async advanceUntil(done, limitMs = 120_000, stepMs = 100) {
      for (let spent = 0; !done(); spent += stepMs) {
        if (spent > limitMs) throw new Error(`not done within ${limitMs} ms of clock time`);
        await clock.advance(stepMs);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    async close() {
      await proxy.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      inventory.stop();
      await driver.close();
      await store.close();
    },
  };
}

/** A WebSocket client that records what it got: terminal bytes, Leasehold's notices, and how it was closed. */
export interface ConsoleClient {
  readonly ws: WebSocket;
  /** The node's output so far (binary frames), as text. */
  output(): string;
  /** Leasehold's notices (text frames). */
  notices(): string[];
  send(text: string): void;
  /** Resolves when `predicate(output)` holds; rejects after `timeoutMs` of real time with what was received. */
  waitFor(predicate: (output: string) => boolean, timeoutMs?: number): Promise<void>;
  /** How the server closed the connection (resolves when it did). */
  readonly closed: Promise<{ code: number; reason: string; at: number }>;
  isClosed(): boolean;
}

export function connect(url: string): ConsoleClient {
  const ws = new WebSocket(url);
  let out = '';
  const notes: string[] = [];
  let closedInfo: { code: number; reason: string; at: number } | null = null;
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) => {
    ws.on('close', (code, reason) => {
      closedInfo = { code, reason: reason.toString('utf8'), at: Date.now() };
      resolve(closedInfo);
    });
  });
  ws.on('error', () => undefined);
  ws.on('message', (data, isBinary) => {
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8');
    if (isBinary) out += text;
    else notes.push(text);
  });
  const opened = new Promise<void>((resolve) => ws.once('open', () => resolve()));
  return {
    ws,
    output: () => out,
    notices: () => notes,
    send(text) {
      void opened.then(() => ws.send(Buffer.from(text, 'utf8')));
    },
    async waitFor(predicate, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(out)) {
        if (Date.now() > deadline) {
          throw new Error(`console output not as expected within ${timeoutMs} ms; got ${JSON.stringify(out)}; closed: ${JSON.stringify(closedInfo)}`);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    closed,
    isClosed: () => closedInfo !== null,
  };
}
