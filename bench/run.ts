#!/usr/bin/env node
/**
 * `npm run bench`: Leasehold's benchmarks. Prints a table of figures and the machine they were measured on.
 *
 * 1. quote and create of the seed request over a seeded pool (PGlite and/or PostgreSQL), through the HTTP app;
 * 2. concurrent clients racing for the same nodes and windows (no overlap may result);
 * 3. many leases ending at one instant: how soon access stops, how long until every node is released;
 * 4. the Ironic-compatible gateway against direct calls to a real Ironic (once, not per engine; skipped without Ironic),
 *    by default with Ironic's noauth and then behind a real Keystone (also Leasehold's identity; skipped without
 *    Keystone); Ironic's http_basic on request (`--ironic-auth`); then the lease engine's hand-over and hand-back
 *    against a real Ironic;
 * 5. growth: quotes and whole node and offer lists at 1,000, 10,000 and 50,000 nodes;
 * 6. the `leasehold serve` process: start on a new and on a used data directory, idle memory.
 * 7. tenant networks against a real Neutron: attach through Leasehold vs directly, and how soon a lease end takes the
 *    networks off (before cleaning); skipped without Neutron.
 *
 * Options: see options.ts (`--quick`, `--engine`, `--json`, `--only`, `--ironic-auth`). docs/benchmarks.md has the figures.
 */
import { writeFile } from 'node:fs/promises';
import { benchGatewayLatency } from './gateway-latency.js';
import { IRONIC_MISSING, ironicInstalled } from './gateway-setup.js';
import { benchGrowth } from './growth.js';
import { benchIronicEngine } from './ironic-engine.js';
import { benchProcess } from './process-start.js';
import { stopOnSignal, type Cleanups } from './stack-processes.js';
import { benchLeaseEnds } from './lease-ends.js';
import { benchNetworks } from './networks.js';
import { machineInfo } from './machine.js';
import { parseOptions, UsageRequested, type BenchOptions, type EngineName } from './options.js';
import { FAST_TIMINGS, seedPool } from './pool.js';
import { benchQuoteCreate } from './quote-create.js';
import { benchRace } from './race.js';
import { formatReport, type BenchReport, type EngineResults, type GatewayVariant } from './report.js';
import { postgresAnswers } from './databases.js';
import { elapsedMs, mib, withRssPeak } from './stats.js';

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function chooseEngines(options: BenchOptions): Promise<EngineName[]> {
  const wanted = options.engine;
  if (wanted === 'pglite') return ['pglite'];
  const answers = await postgresAnswers(options.adminUrl);
  if (wanted === 'auto') {
    if (!answers) progress(`no PostgreSQL answers at ${redact(options.adminUrl)}: PGlite only`);
    return answers ? ['pglite', 'postgres'] : ['pglite'];
  }
  if (!answers) throw new Error(`--engine ${wanted}: no PostgreSQL answers at ${redact(options.adminUrl)} (set LEASEHOLD_BENCH_DATABASE_URL)`);
  return wanted === 'both' ? ['pglite', 'postgres'] : ['postgres'];
}

async function benchEngine(engine: EngineName, options: BenchOptions): Promise<EngineResults> {
  const results: EngineResults = { engine, errors: [] };
  const { sizes, sections } = options;
  if (sections.has(1)) {
    progress(`[${engine}] seeding ${sizes.nodes.toLocaleString('en-US')} nodes, ${sizes.leases.toLocaleString('en-US')} leases`);
    let pool: Awaited<ReturnType<typeof seedPool>> | null = null;
    try {
      const seeded = await withRssPeak(() => seedPool(engine, options.adminUrl, sizes));
      const p = (pool = seeded.result);
      results.seed = { result: { counts: p.seed, ...p.timings }, rssPeak: seeded.rssPeak };
      progress(`[${engine}] seeded in ${(p.timings.totalMs / 1000).toFixed(1)} s (RSS peak ${mib(seeded.rssPeak)})`);
      progress(`[${engine}] 1: up to ${sizes.quotes} quotes and ${sizes.creates} creates of the seed request`);
      results.quoteCreate = await withRssPeak(() => benchQuoteCreate(p, sizes));
      const q = results.quoteCreate.result;
      progress(`[${engine}] 1: quote p50 ${q.quote.p50.toFixed(1)} ms, create p50 ${q.create.p50.toFixed(1)} ms`);
    } catch (err) {
      results.errors.push(describe(err));
      progress(`[${engine}] 1 FAILED: ${describe(err)}`);
    } finally {
      await pool?.close().catch(() => undefined);
    }
  }
  if (sections.has(2)) {
    const racePool = { nodes: sizes.racePoolNodes, leases: sizes.racePoolNodes * 10, raceNodes: sizes.raceNodes };
    progress(`[${engine}] 2: ${sizes.clients} clients × ${sizes.rounds} rounds racing, pool of ${racePool.nodes} nodes`);
    let pool: Awaited<ReturnType<typeof seedPool>> | null = null;
    try {
      const p = (pool = await seedPool(engine, options.adminUrl, racePool));
      results.race = await withRssPeak(() => benchRace(p, sizes, sizes.raceBoxS));
      const r = results.race.result;
      progress(`[${engine}] 2: ${r.successes} leases in ${r.rounds} rounds, ${r.leasesPerSecond.toFixed(2)} leases/s`);
    } catch (err) {
      results.errors.push(describe(err));
      progress(`[${engine}] 2 FAILED: ${describe(err)}`);
    } finally {
      await pool?.close().catch(() => undefined);
      if (results.race && pool?.db.closedStats) results.race.result.deadlocks = pool.db.closedStats.deadlocks;
    }
  }
  if (sections.has(5)) {
    try {
      results.growth = await withRssPeak(() => benchGrowth(engine, options.adminUrl, sizes, progress));
      for (const g of results.growth.result) progress(`[${engine}] 5: ${g.nodes} nodes: quote p50 ${g.quote.p50.toFixed(1)} ms, node list ${g.nodeList.served.p50.toFixed(0)} ms (${g.nodeList.parsed.p50.toFixed(0)} parsed), offer list ${g.offerList.served.p50.toFixed(0)} ms (${g.offerList.parsed.p50.toFixed(0)} parsed)`);
    } catch (err) {
      results.errors.push(describe(err));
      progress(`[${engine}] 5 FAILED: ${describe(err)}`);
    }
  }
  if (sections.has(3)) {
    progress(`[${engine}] 3: ${sizes.ends} leases ending at one instant`);
    try {
      results.leaseEnds = await withRssPeak(() => benchLeaseEnds(engine, options.adminUrl, sizes, options.quick ? 60_000 : 240_000));
      const r = results.leaseEnds.result;
      progress(`[${engine}] 3: access cut p50 ${r.accessCut.p50.toFixed(0)} ms; all released after ${r.release.max.toFixed(1)} s`);
    } catch (err) {
      results.errors.push(describe(err));
      progress(`[${engine}] 3 FAILED: ${describe(err)}`);
    }
  }
  return results;
}

async function main(): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof UsageRequested) {
      process.stdout.write(`${err.message}\n`);
      return 0;
    }
    process.stderr.write(`${describe(err)}\n`);
    return 2;
  }
  const started = performance.now();
  // Section 4 brings its own store (the server's embedded PGlite): no engine to choose when it runs alone.
  const engines = [1, 2, 3, 5].some((s) => options.sections.has(s)) ? await chooseEngines(options) : [];
  const machine = await machineInfo(engines.includes('postgres') ? options.adminUrl : null);
  const report: BenchReport = {
    startedAt: new Date().toISOString(),
    quick: options.quick,
    sizes: options.sizes,
    machine,
    timings: Object.entries(FAST_TIMINGS).map(([k, v]) => `${k} ${v}`).join(', '),
    engines: [],
    totalS: 0,
  };
  progress(`engines: ${engines.join(', ') || 'none'}; sections: ${[...options.sections].join(', ')}${options.quick ? ' (quick)' : ''}`);
  for (const engine of engines) report.engines.push(await benchEngine(engine, options));
  if (options.sections.has(4)) {
    report.gateway = [];
    for (const auth of options.gatewayAuth) {
      const variant: GatewayVariant = { auth };
      report.gateway.push(variant);
      try {
        const g = (variant.section = await benchGatewayLatency(options.sizes, auth, progress));
        if ('skipped' in g) progress(`4 [${auth}]: ${g.skipped}`);
        else progress(`4 [${auth}]: GET p50 ${g.result.get.direct.p50.toFixed(2)} → ${g.result.get.gateway.p50.toFixed(2)} ms, power p50 ${g.result.power.direct.p50.toFixed(2)} → ${g.result.power.gateway.p50.toFixed(2)} ms`);
      } catch (err) {
        variant.error = describe(err);
        progress(`4 [${auth}] FAILED: ${describe(err)}`);
      }
    }
  }
  if (options.sections.has(4) && !options.gatewayOnly) {
    const cleanups: Cleanups = [];
    const unhook = stopOnSignal(cleanups);
    try {
      if (!ironicInstalled()) report.ironicEngine = { skipped: IRONIC_MISSING };
      else {
        const result = await benchIronicEngine(options.sizes, cleanups, progress);
        report.ironicEngine = { result };
        progress(`4 [engine]: start → lessee set p99 ${result.startIdle.p99.toFixed(0)} ms alone, ${result.startInBurst.max.toFixed(0)} ms in a burst; ${result.burst} ends cleared in ${result.clearAllS.toFixed(1)} s (direct ${result.directClearS.toFixed(1)} s)`);
      }
    } catch (err) {
      report.ironicEngine = { error: describe(err) };
      progress(`4 [engine] FAILED: ${describe(err)}`);
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      unhook();
    }
  }
  if (options.sections.has(6)) {
    progress('6: leasehold serve: start, restart, idle memory');
    try {
      const postgres = (await postgresAnswers(options.adminUrl)) && options.engine !== 'pglite' ? options.adminUrl : null;
      report.process = { result: await benchProcess(postgres, { nodes: options.sizes.nodes, leases: options.sizes.leases }) };
    } catch (err) {
      report.process = { error: describe(err) };
      progress(`6 FAILED: ${describe(err)}`);
    }
  }
  if (options.sections.has(7)) {
    report.networks = {};
    try {
      const section = (report.networks.section = await benchNetworks(options.sizes, progress));
      if ('skipped' in section) progress(`7: ${section.skipped}`);
      else progress(`7: attach p50 ${section.result.attach.direct.p50.toFixed(0)} → ${section.result.attach.leasehold.p50.toFixed(0)} ms; VIFs off ${section.result.vifsOff.p50.toFixed(0)} ms after the end`);
    } catch (err) {
      report.networks.error = describe(err);
      progress(`7 FAILED: ${describe(err)}`);
    }
  }
  report.totalS = elapsedMs(started) / 1000;

  process.stdout.write(`\n${formatReport(report)}\n`);
  if (options.jsonPath) {
    await writeFile(options.jsonPath, `${JSON.stringify(report, null, 2)}\n`);
    progress(`results written to ${options.jsonPath}`);
  }
  const networksBroken = report.networks?.error !== undefined || (report.networks?.section && 'result' in report.networks.section && report.networks.section.result.cleanedFirst > 0);
  const failed = report.engines.some((e) => e.errors.length > 0) || report.gateway?.some((v) => v.error) || (report.ironicEngine && 'error' in report.ironicEngine) || (report.process && 'error' in report.process) || networksBroken;
  return failed || invariantBroken(report) ? 1 : 0;
}

/** Double booking or access after the end is a failure of the product, not just a slow figure. */
function invariantBroken(report: BenchReport): boolean {
  return report.engines.some(
    (e) =>
      (e.quoteCreate?.result.overlaps ?? 0) > 0 ||
      (e.race?.result.overlaps ?? 0) > 0 ||
      (e.race?.result.duplicateNodes ?? 0) > 0 ||
      (e.leaseEnds?.result.grantedAfterEnd ?? 0) > 0 ||
      (e.leaseEnds?.result.refusedEarly ?? 0) > 0,
  );
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${describe(err)}\n`);
    process.exit(1);
  },
);
