import type { Comparison, GatewayLatencyResult, GatewaySection } from './gateway-latency.js';
import type { GrowthPoint } from './growth.js';
import type { IronicEngineResult } from './ironic-engine.js';
import type { LeaseEndsResult } from './lease-ends.js';
import type { ProcessResult } from './process-start.js';
import type { MachineInfo } from './machine.js';
import { formatNetworks, type NetworksSection } from './networks.js';
import { GATEWAY_AUTHS, type EngineName, type GatewayAuth, type Sizes } from './options.js';
import type { QuoteCreateResult } from './quote-create.js';
import type { RaceResult } from './race.js';
import type { SeedCounts } from './seed.js';
import { fmt, mib, table, type LatencySummary } from './stats.js';

export interface Measured<T> {
  readonly result: T;
  readonly rssPeak: number;
}

export interface SeedFigures {
  readonly counts: SeedCounts;
  readonly syncMs: number;
  readonly bulkSqlMs: number;
  readonly totalMs: number;
}

export interface EngineResults {
  readonly engine: EngineName;
  seed?: Measured<SeedFigures>;
  quoteCreate?: Measured<QuoteCreateResult>;
  race?: Measured<RaceResult>;
  leaseEnds?: Measured<LeaseEndsResult>;
  growth?: Measured<GrowthPoint[]>;
  /** A section that failed: its error, so the others still report. */
  errors: string[];
}

export interface BenchReport {
  readonly startedAt: string;
  readonly quick: boolean;
  readonly sizes: Sizes;
  readonly machine: MachineInfo;
  readonly timings: string;
  readonly engines: EngineResults[];
  /** Section 4 (run once, not per engine), one entry per variant in the order run: its figures, or why it did not run, or its error. */
  gateway?: GatewayVariant[];
  /** Section 5 (once): tenant networks against a real Neutron, or why it did not run, or its error. */
  networks?: { section?: NetworksSection; error?: string };
  /** Section 4's engine part (run once): its figures, or why it did not run, or its error. */
  ironicEngine?: { result: IronicEngineResult } | { skipped: string } | { error: string };
  /** Section 6 (run once). */
  process?: { result: ProcessResult } | { error: string };
  totalS: number;
}

export interface GatewayVariant {
  readonly auth: GatewayAuth;
  section?: GatewaySection;
  error?: string;
}

const n = (x: number) => x.toLocaleString('en-US');
const lat = (s: LatencySummary | undefined, pick: keyof LatencySummary, digits = 1) => (s ? fmt(s[pick], digits) : '-');
const counts = (m: Record<string, number> | undefined) =>
  m && Object.keys(m).length > 0 ? Object.entries(m).map(([k, v]) => `${v} × ${k}`).join(', ') : '0';

function section(title: string, engines: readonly EngineResults[], rows: [string, (e: EngineResults) => string][]): string {
  const header = ['', ...engines.map((e) => e.engine)];
  return `${title}\n${table([header, ...rows.map(([label, get]) => [label, ...engines.map((e) => get(e))])])}`;
}

export function formatReport(r: BenchReport): string {
  const m = r.machine;
  const s = r.sizes;
  const out: string[] = [];
  out.push(
    `Leasehold benchmarks${r.quick ? ' (--quick)' : ''} — ${r.startedAt}`,
    `machine: ${m.cpu}, ${m.cores} cores, ${m.memory}`,
    `         ${m.os}; node ${m.node}; PostgreSQL: ${m.postgres ?? 'not used'}; PGlite ${m.pglite}`,
    `simulated driver timings: ${r.timings}`,
    '',
  );
  const e1 = r.engines.filter((e) => e.seed || e.quoteCreate);
  if (e1.length > 0) {
    out.push(
      section(`1. Seed request (3 × GPU ≥ 48 GiB + 1 × ≥ 16 GiB, ≥ 1 TB; 3d) over ${n(s.nodes)} nodes and ${n(s.leases)} existing leases, in-process HTTP, one request at a time`, e1, [
        ['seeding: total (s)', (e) => (e.seed ? fmt(e.seed.result.totalMs / 1000) : '-')],
        ['  inventory sync of the nodes (s)', (e) => (e.seed ? fmt(e.seed.result.syncMs / 1000) : '-')],
        ['  bulk SQL: offers, leases, allocations, tasks, events (s)', (e) => (e.seed ? fmt(e.seed.result.bulkSqlMs / 1000) : '-')],
        ['  leases ended / active / pending', (e) => (e.seed ? `${n(e.seed.result.counts.ended)} / ${n(e.seed.result.counts.active)} / ${n(e.seed.result.counts.pending)}` : '-')],
        ['quotes measured (n)', (e) => lat(e.quoteCreate?.result.quote, 'n', 0)],
        ['quote p50 (ms)', (e) => lat(e.quoteCreate?.result.quote, 'p50')],
        ['quote p99 (ms)', (e) => lat(e.quoteCreate?.result.quote, 'p99')],
        ['quote max (ms)', (e) => lat(e.quoteCreate?.result.quote, 'max')],
        ['quote answers other than 200', (e) => counts(e.quoteCreate?.result.quoteOther)],
        ['creates measured (n)', (e) => lat(e.quoteCreate?.result.create, 'n', 0)],
        ['create p50 (ms)', (e) => lat(e.quoteCreate?.result.create, 'p50')],
        ['create p99 (ms)', (e) => lat(e.quoteCreate?.result.create, 'p99')],
        ['create max (ms)', (e) => lat(e.quoteCreate?.result.create, 'max')],
        ['create answers other than 201', (e) => counts(e.quoteCreate?.result.createOther)],
        ['allocations per created lease', (e) => (e.quoteCreate ? fmt(e.quoteCreate.result.allocationsPerLease, 0) : '-')],
        ['store.allNodes() p50 (ms) (the whole inventory; plans no longer read it)', (e) => lat(e.quoteCreate?.result.allNodes, 'p50')],
        ['overlapping allocations (SQL)', (e) => (e.quoteCreate ? String(e.quoteCreate.result.overlaps) : '-')],
        ['RSS peak: seeding', (e) => (e.seed ? mib(e.seed.rssPeak) : '-')],
        ['RSS peak: quotes and creates', (e) => (e.quoteCreate ? mib(e.quoteCreate.rssPeak) : '-')],
      ]),
      '',
    );
  }
  const e2 = r.engines.filter((e) => e.race);
  if (e2.length > 0) {
    const race = (e: EngineResults) => e.race!.result;
    out.push(
      section(`2. Race: ${s.clients} concurrent clients per round, all asking for 2 of the same ${s.raceNodes} nodes in the round's window (12 h), over a pool of ${n(s.racePoolNodes)} nodes and ${n(s.racePoolNodes * 10)} leases`, e2, [
        ['topology', (e) => race(e).topology],
        ['rounds × clients = requests', (e) => `${race(e).rounds} × ${race(e).clients} = ${n(race(e).requests)}`],
        ['successes (201) / possible', (e) => `${race(e).successes} / ${race(e).expectedSuccesses}`],
        ['conflicts (409)', (e) => counts(race(e).conflicts)],
        ['other answers', (e) => counts(race(e).errors)],
        ['leases/s', (e) => fmt(race(e).leasesPerSecond, 2)],
        ['requests/s', (e) => fmt(race(e).requestsPerSecond, 1)],
        ['request p50 (ms)', (e) => lat(race(e).latency, 'p50', 0)],
        ['request p99 (ms)', (e) => lat(race(e).latency, 'p99', 0)],
        ['PostgreSQL: peak sessions waiting on a lock', (e) => (race(e).peakLockWaiters === null ? '-' : String(race(e).peakLockWaiters))],
        ['PostgreSQL: deadlocks detected', (e) => (race(e).deadlocks === null ? '-' : String(race(e).deadlocks))],
        ['node given twice in a round', (e) => String(race(e).duplicateNodes)],
        ['overlapping allocations (SQL)', (e) => String(race(e).overlaps)],
        ['RSS peak', (e) => mib(e.race!.rssPeak)],
      ]),
      '',
    );
  }
  const e3 = r.engines.filter((e) => e.leaseEnds);
  if (e3.length > 0) {
    out.push(
      section(`3. ${n(s.ends)} one-node leases ending at the same instant, lease engine running, real clock`, e3, [
        ['lease engine options', (e) => e.leaseEnds!.result.engineOptions],
        ['create the leases (store.createLease, 8 at a time) (s)', (e) => fmt(e.leaseEnds!.result.createS)],
        ['hand-over: engine start → all allocations active (s)', (e) => fmt(e.leaseEnds!.result.handOverS)],
        ['all ends moved to one instant, margin before it (ms)', (e) => fmt(e.leaseEnds!.result.shortenMarginMs, 0)],
        [`access refused after the end, p50 (ms), sample ${s.accessSample}`, (e) => lat(e.leaseEnds!.result.accessCut, 'p50')],
        ['access refused after the end, max (ms)', (e) => lat(e.leaseEnds!.result.accessCut, 'max')],
        ['200s to requests sent after the end', (e) => String(e.leaseEnds!.result.grantedAfterEnd)],
        ['404s that arrived before the end', (e) => String(e.leaseEnds!.result.refusedEarly)],
        ['sampled leases never seen granted before the end', (e) => String(e.leaseEnds!.result.neverGranted)],
        ['released: first (s after the end)', (e) => lat(e.leaseEnds!.result.release, 'min', 2)],
        ['released: p50 (s after the end)', (e) => lat(e.leaseEnds!.result.release, 'p50', 2)],
        ['released: all (s after the end)', (e) => (e.leaseEnds!.result.timedOut ? 'timed out' : lat(e.leaseEnds!.result.release, 'max', 2))],
        ['allocations released / not released', (e) => `${n(e.leaseEnds!.result.released)} / ${counts(e.leaseEnds!.result.otherStates)}`],
        ['RSS peak', (e) => mib(e.leaseEnds!.rssPeak)],
      ]),
      '',
    );
  }
  const e5 = r.engines.filter((e) => e.growth);
  if (e5.length > 0) out.push(formatGrowth(e5), '');
  if (r.gateway) out.push(formatGateway(r.gateway, s), '');
  if (r.networks) out.push(formatNetworks(r.networks.section, r.networks.error), '');
  if (r.ironicEngine) out.push(formatIronicEngine(r.ironicEngine), '');
  if (r.process) out.push(formatProcess(r.process), '');
  for (const e of r.engines) for (const err of e.errors) out.push(`ERROR [${e.engine}] ${err}`);
  for (const v of r.gateway ?? []) if (v.error) out.push(`ERROR [4. gateway, ${v.auth}] ${v.error}`);
  if (r.ironicEngine && 'error' in r.ironicEngine) out.push(`ERROR [4. engine] ${r.ironicEngine.error}`);
  if (r.process && 'error' in r.process) out.push(`ERROR [6. process] ${r.process.error}`);
  out.push(`total run time: ${fmt(r.totalS)} s`);
  return out.join('\n');
}

const AUTH_NOTE: Record<GatewayAuth, string> = {
  noauth: 'Ironic noauth: no credentials, the cheapest Ironic there is',
  http_basic: 'Ironic http_basic: every request, direct or forwarded, carries Basic credentials that Ironic checks against a bcrypt hash (cost 4)',
  keystone:
    "Keystone: Ironic's keystonemiddleware and Leasehold (LEASEHOLD_IDENTITY=keystone, Ironic found in the catalog) each validate a token with Keystone on first sight and cache the answer (300 s / KEYSTONE_TOKEN_CACHE_TTL 30 s); the gateway forwards with Leasehold's service token. Warm figures; a token's first call is the 'new token' row",
};

/** The variants side by side: per variant, direct / gateway / ratio / added. */
function formatGateway(variants: readonly GatewayVariant[], s: Sizes): string {
  const title = '4. Gateway overhead against direct Ironic: a lessee through /baremetal vs. the same call to Ironic';
  const ran = variants.flatMap((v) => (v.section && 'result' in v.section ? [v.section.result] : []));
  // noauth in the first columns whatever the order they ran in (given by `ran`).
  const results = [...ran].sort((a, b) => GATEWAY_AUTHS.indexOf(a.auth) - GATEWAY_AUTHS.indexOf(b.auth));
  const skipped = variants.flatMap((v) => (v.section && 'skipped' in v.section ? [`${v.auth}: ${v.section.skipped}`] : []));
  if (results.length === 0) return [title, ...skipped, ...variants.filter((v) => v.error).map((v) => `${v.auth}: failed (below)`)].join('\n');
  const header = [''];
  for (const r of results) header.push(`${r.auth}: direct`, 'gateway', 'gateway / direct', 'added (ms)');
  const rows: string[][] = [header];
  const row = (label: string, cells: (r: GatewayLatencyResult) => string[]) => rows.push([label, ...results.flatMap(cells)]);
  const compare = (label: string, pick: (r: GatewayLatencyResult) => Comparison) => {
    for (const p of ['p50', 'p95', 'p99', 'mean'] as const) {
      row(`${label} ${p} (ms)`, (r) => {
        const c = pick(r);
        return [fmt(c.direct[p], 2), fmt(c.gateway[p], 2), fmt(c.gateway[p] / c.direct[p], 2), fmt(c.gateway[p] - c.direct[p], 2)];
      });
    }
  };
  compare('GET /v1/nodes/{uuid}', (r) => r.get);
  compare('PUT …/states/power (202)', (r) => r.power);
  if (results.some((r) => r.cold)) {
    for (const p of ['p50', 'p95', 'max'] as const) {
      row(`GET with a new token (first call) ${p} (ms)`, (r) => {
        const c = r.cold;
        return c ? [fmt(c.direct[p], 2), fmt(c.gateway[p], 2), fmt(c.gateway[p] / c.direct[p], 2), fmt(c.gateway[p] - c.direct[p], 2)] : ['-', '-', '-', '-'];
      });
    }
  }
  row('Leasehold alone: GET /healthz p50 / p95 (ms)', (r) => ['', `${fmt(r.reference.health.p50, 2)} / ${fmt(r.reference.health.p95, 2)}`, '', '']);
  row('Leasehold alone: REST GET /v1/nodes/{uuid} p50 / p95 (ms)', (r) => ['', `${fmt(r.reference.lookup.p50, 2)} / ${fmt(r.reference.lookup.p95, 2)}`, '', '']);
  const t0 = results[0]!.throughput;
  row(`GET, ${t0.clients} concurrent clients (req/s)`, (r) => [fmt(r.throughput.direct, 0), fmt(r.throughput.gateway, 0), fmt(r.throughput.gateway / r.throughput.direct, 2), '']);
  const first = results[0]!;
  const signed = (x: number) => `${x >= 0 ? '+' : '−'}${fmt(Math.abs(x), 2)}`;
  const against = results.slice(1).map((r) => {
    const d = (pick: (x: GatewayLatencyResult) => Comparison) => signed(pick(r).direct.p50 - pick(first).direct.p50);
    return `${r.auth} against ${first.auth}, direct p50: GET ${d((x) => x.get)} ms, power PUT ${d((x) => x.power)} ms (the variants are not interleaved with each other: ran ${ran.map((x) => x.auth).join(' then ')})`;
  });
  return [
    title,
    `${first.ironic}, one process, SQLite, fake-hardware${results.map((r) => (r.extra ? `; ${r.auth}: ${r.extra}` : '')).join('')}; leasehold serve (embedded PGlite)`,
    `as its own process; each variant its own`,
    `Ironic and leasehold serve${ran.length > 1 ? `, one after the other (${ran.map((x) => x.auth).join(', then ')})` : ` (${ran[0]!.auth} only)`}. One client at a time, interleaved, ${s.gatewaySamples} samples per kind after ${first.warmup} warm-up`,
    `(n: ${results.map((r) => `${r.auth} GET ${r.get.gateway.n}, PUT ${r.power.gateway.n}${r.cold ? `, new-token GET ${r.cold.gateway.n}` : ''}`).join('; ')}); throughput ${n(t0.requests)} GETs per kind.`,
    ...results.map((r) => `  ${AUTH_NOTE[r.auth]}`),
    ...results.flatMap((r) =>
      r.directAs ? [`  ${r.auth}: the direct GET carries the token of ${r.directAs.get}; the direct power PUT that of ${r.directAs.power}; the gateway's always the lessee's member's`] : [],
    ),
    table(rows),
    ...results.map(
      (r) =>
        `${r.auth}: answers other than 200 / 202: ${counts(r.unexpected)}; leasehold serve RSS peak ${r.serverRssPeak === null ? '-' : mib(r.serverRssPeak)}; load average (1 min) ${r.load.start.toFixed(2)} at start, ${r.load.end.toFixed(2)} at end`,
    ),
    ...against,
    ...skipped,
  ].join('\n');
}

/** Section 5: per engine and inventory size, the quote and the whole lists. */
function formatGrowth(engines: readonly EngineResults[]): string {
  const sizes = engines[0]!.growth!.result.map((g) => g.nodes);
  const header = ['', ...engines.flatMap((e) => sizes.map((n) => `${e.engine} ${n.toLocaleString('en-US')}`))];
  const row = (label: string, cell: (g: GrowthPoint) => string) => [label, ...engines.flatMap((e) => e.growth!.result.map(cell))];
  return [
    '5. Growth: the seed request quoted, and every node and every offer listed by the operator (pages of 1,000), as the inventory grows (two leases and one offer per node)',
    table([
      header,
      row('leases seeded', (g) => n(g.leases)),
      row('seeding (s)', (g) => fmt(g.seedS)),
      row('quote p50 (ms)', (g) => fmt(g.quote.p50)),
      row('quote p99 (ms)', (g) => fmt(g.quote.p99)),
      row('whole node list served p50 (ms)', (g) => fmt(g.nodeList.served.p50)),
      row('  with the client parsing it (ms)', (g) => fmt(g.nodeList.parsed.p50)),
      row('whole offer list served p50 (ms)', (g) => fmt(g.offerList.served.p50)),
      row('  with the client parsing it (ms)', (g) => fmt(g.offerList.parsed.p50)),
    ]),
    ...engines.map((e) => `${e.engine}: RSS peak over the section ${mib(e.growth!.rssPeak)}`),
  ].join('\n');
}

function formatIronicEngine(r: NonNullable<BenchReport['ironicEngine']>): string {
  const title = '4b. Lease engine against a real Ironic (leasehold serve, embedded store, noauth Ironic): hand-over and hand-back, from the audit log';
  if ('skipped' in r) return `${title}\n${r.skipped}`;
  if ('error' in r) return `${title}\nfailed (below)`;
  const e = r.result;
  return [
    title,
    table([
      ['', 'figure'],
      [`lease of 4 nodes, alone: start → lessee set on all 4, p50 / p99 / max (ms), n ${e.startIdle.n}`, `${fmt(e.startIdle.p50, 0)} / ${fmt(e.startIdle.p99, 0)} / ${fmt(e.startIdle.max, 0)}`],
      [`lease of 4 nodes starting with a lease of ${e.burst}: start → lessee set on all 4 (ms)`, fmt(e.startInBurst.max, 0)],
      [`the lease of ${e.burst}: start → lessee set on all (s)`, fmt(e.burstSetS, 2)],
      [`${e.burst} ends at one instant: end → lessee cleared on all (s); the first (ms)`, `${fmt(e.clearAllS, 2)}; ${fmt(e.clearFirstMs, 0)}`],
      [`the same ${e.burst} PATCHes straight to Ironic, ${e.directConcurrency} at a time: set / clear (s)`, `${fmt(e.directSetS, 2)} / ${fmt(e.directClearS, 2)}`],
      ['lessees cleared: Leasehold / direct', fmt(e.clearAllS / e.directClearS, 2)],
    ]),
  ].join('\n');
}

function formatProcess(r: NonNullable<BenchReport['process']>): string {
  const title = '6. leasehold serve (demo inventory, embedded PGlite): spawn → first 200 from /healthz, and memory when idle';
  if ('error' in r) return `${title}\nfailed (below)`;
  const p = r.result;
  return [
    title,
    table([
      ['', 'p50 / max'],
      [`new data directory (ms), n ${p.fresh.n}`, `${fmt(p.fresh.p50, 0)} / ${fmt(p.fresh.max, 0)}`],
      [`restart on the same data directory (ms), n ${p.restart.n}`, `${fmt(p.restart.p50, 0)} / ${fmt(p.restart.max, 0)}`],
      ['idle demo 5 s after start: RSS / peak', `${mib(p.idleRss)} / ${mib(p.idlePeak)}`],
      [
        p.atScale ? `on PostgreSQL with ${n(p.atScale.nodes)} nodes and ${n(p.atScale.leases)} leases, after 20 quotes: RSS / peak` : 'with a large inventory (needs PostgreSQL)',
        p.atScale ? `${mib(p.atScale.rss)} / ${mib(p.atScale.peak)}` : '-',
      ],
      ['  its seed-request quote over HTTP, p50 (ms)', p.atScale ? fmt(p.atScale.quoteP50) : '-'],
    ]),
  ].join('\n');
}
