import { WebSocket } from 'ws';
import type { ConsoleProxy, ConsoleProxyOptions } from '../../src/console/console-proxy.js';
import type { HardwareDriver } from '../../src/drivers/hardware-driver.js';
import type { SimulatedDriver, SimulatedNodeSpec } from '../../src/drivers/simulated/simulated-driver.js';
import { startApp, type TestApp } from '../support/test-app.js';

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
  const t = await startApp({
    nodes: options.nodes ?? consoleInventory(),
    timings: { bootOutputMs: 0 },
    wrapDriver: options.wrapDriver,
    listen: true,
    console: { tokenTtlMs: options.tokenTtlMs, publicUrl: options.publicUrl, proxy: options.session },
    logTo: options.logTo,
  });
  return {
    ...t,
    url: t.url!,
    proxy: t.consoles,
    async advanceUntil(done, limitMs = 120_000, stepMs = 100) {
      for (let spent = 0; !done(); spent += stepMs) {
        if (spent > limitMs) throw new Error(`not done within ${limitMs} ms of clock time`);
        await t.clock.advance(stepMs);
        await new Promise((r) => setTimeout(r, 5));
      }
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
