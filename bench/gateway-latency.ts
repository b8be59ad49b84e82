import { loadavg } from 'node:os';
import { call, ironicInstalled, ironicVersion, IRONIC_MISSING, peakRss, startGatewayStack, type Call, type GatewayStack, type Reply } from './gateway-setup.js';
import { startKeystoneGatewayStack } from './keystone-gateway.js';
import { keystoneInstalled, KEYSTONE_MISSING } from './keystone-setup.js';
import type { GatewayAuth, Sizes } from './options.js';
import { reapStale, stopOnSignal, until, type Cleanups } from './stack-processes.js';
import { sleep } from './stats.js';

/**
 * Section 4: what Leasehold's Ironic-compatible gateway (`/baremetal`) costs a client, against the same call sent
 * straight to Ironic. A real standalone Ironic (one process, SQLite, fake-hardware, no fake delays) and the real
 * `leasehold serve` (LEASEHOLD_DRIVER=ironic, embedded PGlite store) run as their own processes, as in production
 * (set up in gateway-setup.ts); this process is only the client. A lessee with an active lease on the node makes
 * the gateway calls, so each goes through token authentication, the lease-table lookup, the node policy and (GET)
 * the redaction before the forward.
 *
 * Three variants, each measured the same way with its own Ironic and Leasehold: Ironic with `noauth` (the gateway's
 * own cost against the cheapest possible Ironic), with `http_basic` (Ironic checks a bcrypt hash on every request,
 * direct or forwarded: what a standalone deployment looks like), and with `keystone` (a real Keystone in front of
 * Ironic and as Leasehold's identity, keystone-gateway.ts: both sides validate a token once and cache the answer;
 * the figures are the warm ones, and a token's first call is timed apart, `cold`).
 */

/**
 * Power PUTs start this long after the previous one answered: Ironic locks the node for the fake power action
 * (≈ 45 ms; another PUT meanwhile is a 409 the gateway would retry after 200 ms), and the gateway refreshes the
 * node from Ironic 200 ms after forwarding a change (inventory.followNode): neither may overlap a measured call.
 */
const POWER_SPACING_MS = 250;

/** Milliseconds (nearest rank), and the sample count. */
export type Percentiles = Readonly<Record<'n' | 'p50' | 'p95' | 'p99' | 'mean' | 'max', number>>;

export interface Comparison {
  readonly direct: Percentiles;
  readonly gateway: Percentiles;
}

export interface GatewayLatencyResult {
  /** How Ironic (and so Leasehold's Ironic client, and the direct calls) authenticates. */
  readonly auth: GatewayAuth;
  /** Ironic's package version and highest API microversion. */
  readonly ironic: string;
  /** What else ran behind (Keystone's version), or null. */
  readonly extra: string | null;
  /** Whose token the direct GET and power PUT carried (under keystone), or null: Ironic's credentials. */
  readonly directAs: { readonly get: string; readonly power: string } | null;
  readonly warmup: number;
  readonly get: Comparison;
  readonly power: Comparison;
  /**
   * Under keystone: the node GET with a token the side has never seen (a new token of the lessee per call and side),
   * so the side asks Keystone to validate it first; null in the other variants.
   */
  readonly cold: Comparison | null;
  /**
   * Leasehold alone, no Ironic call, timed in the same GET rounds: `GET /healthz` (the extra HTTP hop and the
   * middleware) and the REST `GET /v1/nodes/{uuid}` as the lessee (that plus the token, node and lease lookups the
   * gateway makes before it forwards).
   */
  readonly reference: { readonly health: Percentiles; readonly lookup: Percentiles };
  /** GETs with `clients` concurrent clients, bursts of `burst` requests per kind and round, interleaved. */
  readonly throughput: { readonly clients: number; readonly requests: number; readonly direct: number; readonly gateway: number };
  /** Answers other than 200 (GET) and 202 (PUT), by kind and status; such calls are not counted as samples. */
  readonly unexpected: Record<string, number>;
  /** Peak RSS of the `leasehold serve` process (VmHWM), bytes; null off Linux. */
  readonly serverRssPeak: number | null;
  /** 1-minute load average when the variant started and ended: other work on the machine skews the figures. */
  readonly load: { readonly start: number; readonly end: number };
}

export type GatewaySection = { readonly result: GatewayLatencyResult } | { readonly skipped: string };

type Kind = 'direct' | 'gateway';
type Sample = Pick<Sizes, 'gatewaySamples' | 'gatewayWarmup' | 'gatewayCold' | 'gatewayClients' | 'gatewayRounds' | 'gatewayBurst'>;

/** What the measuring loops share: the node, the two ways to it, and the tally of unexpected answers. */
interface Rig {
  readonly uuid: string;
  readonly serverUrl: string;
  readonly lesseeToken: string;
  /** Ironic with its operator's credentials (the idle checks). */
  readonly ironic: Call;
  send(kind: Kind, method: string, path: string, body?: unknown): Promise<Reply>;
  /** True when `reply` has `status`; anything else is counted under `what` and not used as a sample. */
  expect(what: string, reply: Reply, status: number): boolean;
}

/**
 * Runs one variant of section 4 (`auth`: how Ironic authenticates), or says why it cannot (Ironic, or for
 * `keystone` Keystone, not installed); everything it started is stopped at the end, also on a failure or a signal.
 */
export async function benchGatewayLatency(sizes: Sample, auth: GatewayAuth, progress: (message: string) => void): Promise<GatewaySection> {
  if (!ironicInstalled()) return { skipped: IRONIC_MISSING };
  if (auth === 'keystone' && !keystoneInstalled()) return { skipped: KEYSTONE_MISSING };
  const say = (message: string) => progress(`4 [${auth}]: ${message}`);
  await reapStale(say);
  const loadStart = loadavg()[0]!;
  const cleanups: Cleanups = [];
  const released = stopOnSignal(cleanups);
  try {
    const stack: GatewayStack = auth === 'keystone' ? await startKeystoneGatewayStack(cleanups, progress) : await startGatewayStack(auth, cleanups, progress);
    const unexpected: Record<string, number> = {};
    const rig: Rig = {
      uuid: stack.uuid,
      serverUrl: stack.serverUrl,
      lesseeToken: stack.lesseeToken,
      ironic: stack.ironic,
      send: (kind, method, path, body) =>
        kind === 'direct'
          ? (method === 'PUT' ? stack.direct.power : stack.direct.get)(method, path, body)
          : call(`${stack.serverUrl}/baremetal${path}`, method, { 'X-Auth-Token': stack.lesseeToken }, body),
      expect(what, reply, status) {
        if (reply.status !== status) unexpected[`${what} ${reply.status}`] = (unexpected[`${what} ${reply.status}`] ?? 0) + 1;
        return reply.status === status;
      },
    };
    say(`${sizes.gatewayWarmup} + ${sizes.gatewaySamples} GETs per kind, one at a time, interleaved`);
    const gets = await measureGets(rig, sizes);
    let cold: Comparison | null = null;
    if (stack.cold) {
      say(`${sizes.gatewayCold} GETs per kind, each with a new token of the lessee (its first call)`);
      cold = await measureCold(rig, stack.cold, sizes.gatewayCold);
    }
    say(`${sizes.gatewayWarmup} + ${sizes.gatewaySamples} power PUTs per kind, ${POWER_SPACING_MS} ms apart and the node idle`);
    const power = await measurePower(rig, sizes);
    say(`throughput, ${sizes.gatewayClients} clients, ${sizes.gatewayRounds} × ${sizes.gatewayBurst} GETs per kind`);
    const throughput = await measureThroughput(rig, sizes);
    return {
      result: {
        auth,
        ironic: await ironicVersion(stack.ironic),
        extra: stack.extra,
        directAs: stack.directAs,
        warmup: sizes.gatewayWarmup,
        get: { direct: percentiles(gets.direct), gateway: percentiles(gets.gateway) },
        power,
        cold,
        reference: { health: percentiles(gets.health), lookup: percentiles(gets.lookup) },
        throughput,
        unexpected,
        serverRssPeak: peakRss(stack.serverPid),
        load: { start: loadStart, end: loadavg()[0]! },
      },
    };
  } finally {
    for (const cleanup of [...cleanups].reverse()) await cleanup().catch((err: unknown) => say(`cleanup failed: ${String(err)}`));
    released();
  }
}

/**
 * A token's first call on each side: per round a new token of the lessee for each kind (never shown to the other
 * side, so neither Ironic's nor Leasehold's cache, nor Keystone's validation of it for the other, helps), the
 * kinds' order alternating. Issuing the tokens is not timed.
 */
async function measureCold(rig: Rig, cold: NonNullable<GatewayStack['cold']>, rounds: number): Promise<Comparison> {
  const samples: Record<Kind, number[]> = { direct: [], gateway: [] };
  const path = `/v1/nodes/${rig.uuid}`;
  for (let i = 0; i < rounds; i++) {
    const tokens = { direct: await cold.newToken(), gateway: await cold.newToken() };
    for (const kind of order(i)) {
      const t0 = performance.now();
      const reply =
        kind === 'direct'
          ? await cold.directWith(tokens.direct)('GET', path)
          : await call(`${rig.serverUrl}/baremetal${path}`, 'GET', { 'X-Auth-Token': tokens.gateway });
      const ms = performance.now() - t0;
      if (rig.expect(`${kind} GET (new token)`, reply, 200)) samples[kind].push(ms);
    }
  }
  return { direct: percentiles(samples.direct), gateway: percentiles(samples.gateway) };
}

/** One client, interleaved: each round times the node GET both ways, then the two Leasehold-only references. */
async function measureGets(rig: Rig, sizes: Sample): Promise<Record<Kind | 'health' | 'lookup', number[]>> {
  const samples: Record<Kind | 'health' | 'lookup', number[]> = { direct: [], gateway: [], health: [], lookup: [] };
  const path = `/v1/nodes/${rig.uuid}`;
  const references = [
    ['health', () => call(`${rig.serverUrl}/healthz`, 'GET', {})],
    ['lookup', () => call(`${rig.serverUrl}${path}`, 'GET', { authorization: `Bearer ${rig.lesseeToken}` })],
  ] as const;
  for (let i = 0; i < sizes.gatewayWarmup + sizes.gatewaySamples; i++) {
    for (const [kind, get] of [...order(i).map((k) => [k, () => rig.send(k, 'GET', path)] as const), ...references]) {
      const t0 = performance.now();
      const reply = await get();
      const ms = performance.now() - t0;
      if (rig.expect(`${kind} GET`, reply, 200) && i >= sizes.gatewayWarmup) samples[kind].push(ms);
    }
  }
  return samples;
}

/** One client, interleaved, alternating power on and off; every PUT on an idle node, POWER_SPACING_MS apart. */
async function measurePower(rig: Rig, sizes: Sample): Promise<Comparison> {
  const samples: Record<Kind, number[]> = { direct: [], gateway: [] };
  let lastEnd = performance.now();
  let on = true;
  for (let i = 0; i < sizes.gatewayWarmup + sizes.gatewaySamples; i++) {
    for (const kind of order(i)) {
      await idle(rig, lastEnd + POWER_SPACING_MS);
      const t0 = performance.now();
      const reply = await rig.send(kind, 'PUT', `/v1/nodes/${rig.uuid}/states/power`, { target: on ? 'power on' : 'power off' });
      lastEnd = performance.now();
      if (rig.expect(`${kind} power PUT`, reply, 202)) {
        on = !on;
        if (i >= sizes.gatewayWarmup) samples[kind].push(lastEnd - t0);
      }
    }
  }
  return { direct: percentiles(samples.direct), gateway: percentiles(samples.gateway) };
}

/** `gatewayClients` concurrent clients: bursts of GETs, one per kind and round, the kinds' order alternating. */
async function measureThroughput(rig: Rig, sizes: Sample): Promise<GatewayLatencyResult['throughput']> {
  const busy: Record<Kind, number> = { direct: 0, gateway: 0 };
  for (let round = 0; round < sizes.gatewayRounds; round++) {
    for (const kind of order(round)) {
      let left = sizes.gatewayBurst;
      const t0 = performance.now();
      const client = async () => {
        while (left-- > 0) rig.expect(`${kind} GET (concurrent)`, await rig.send(kind, 'GET', `/v1/nodes/${rig.uuid}`), 200);
      };
      await Promise.all(Array.from({ length: sizes.gatewayClients }, client));
      busy[kind] += performance.now() - t0;
    }
  }
  const requests = sizes.gatewayRounds * sizes.gatewayBurst;
  return { clients: sizes.gatewayClients, requests, direct: (requests * 1000) / busy.direct, gateway: (requests * 1000) / busy.gateway };
}

/** Direct first on even rounds, the gateway first on odd ones: drift and "who goes second" cancel out. */
const order = (i: number): readonly Kind[] => (i % 2 === 0 ? ['direct', 'gateway'] : ['gateway', 'direct']);

/** Nearest-rank percentiles in ms. */
export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const rank = (p: number) => (n === 0 ? NaN : sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!);
  const mean = n === 0 ? NaN : sorted.reduce((s, x) => s + x, 0) / n;
  return { n, p50: rank(50), p95: rank(95), p99: rank(99), mean, max: n === 0 ? NaN : sorted[n - 1]! };
}

/** Waits until `notBefore` (performance.now() time) and until Ironic holds no lock and no pending power change. */
async function idle(rig: Rig, notBefore: number): Promise<void> {
  if (notBefore > performance.now()) await sleep(notBefore - performance.now());
  const settled = async () => {
    const node = JSON.parse((await rig.ironic('GET', `/v1/nodes/${rig.uuid}?fields=reservation,target_power_state`)).text);
    return node.reservation === null && node.target_power_state === null;
  };
  await until(settled, 30_000, `node ${rig.uuid} idle`);
}
