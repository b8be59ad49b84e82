import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AllocationState, LEASE_STATES } from '../domain/leasing.js';
import type { Metrics, MetricsEndpoint, TaskRunOutcome } from '../domain/metrics.js';
import type { NodeStateCount } from '../store/stats-store.js';
import type { Store } from '../store/store.js';

interface StoreCounts {
  readonly leases: ReadonlyMap<string, number>;
  readonly allocations: ReadonlyMap<string, number>;
  readonly nodes: readonly NodeStateCount[];
}

/** The three grouped counts side by side; null when there is no store or it does not answer. */
async function readCounts(store: Pick<Store, 'stats'> | undefined): Promise<StoreCounts | null> {
  if (!store) return null;
  try {
    const [leases, allocations, nodes] = await Promise.all([store.stats.leasesByState(), store.stats.allocationsByState(), store.stats.nodesByState()]);
    return { leases, allocations, nodes };
  } catch {
    // The database away: the scrape still answers (HTTP, engine, process metrics) and leasehold_store_up says 0.
    return null;
  }
}

/** What is read at scrape time rather than counted as it happens. */
export interface ScrapeSources {
  /** Leases, allocations and nodes by state (store.stats, three grouped counts) and the connection pool. */
  readonly store?: Pick<Store, 'stats'>;
  /** This process's open serial console connections. */
  readonly consoles?: { readonly openConnections: number };
}

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BACKEND_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Lag: a healthy engine runs tasks within a second; minutes mean a backlog or a replica away. */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];
/** Cleaning: seconds on simulated hardware, minutes to an hour or two on real disks. */
const CLEANING_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 7200];
const PASS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The Metrics port on prom-client, in a registry of its own (never prom-client's global one), so several apps in
 * one process — tests, the benchmark — each count their own. Counters and histograms are fed as things happen;
 * gauges of state are read at scrape time from the sources given with `watch`.
 */
export class PrometheusMetrics implements Metrics, MetricsEndpoint {
  readonly registry = new Registry();
  private sources: ScrapeSources = {};

  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly taskRuns: Counter<'kind' | 'outcome'>;
  private readonly taskLag: Histogram<'kind'>;
  private readonly cleaning: Histogram;
  private readonly repairs: Counter<'kind'>;
  private readonly passes: Histogram<'outcome'>;
  private readonly backendDuration: Record<'ironic' | 'keystone', Histogram<'method' | 'path'>>;
  private readonly backendErrors: Record<'ironic' | 'keystone', Counter<'method' | 'path' | 'error'>>;

  /** `processMetrics`: prom-client's process and Node.js metrics too (the server; not the tests' many apps). */
  constructor(options: { readonly processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.httpRequests = new Counter({ name: 'leasehold_http_requests_total', help: 'HTTP requests answered, by method, route template and status', labelNames: ['method', 'route', 'status'], registers });
    this.httpDuration = new Histogram({ name: 'leasehold_http_request_duration_seconds', help: 'Time to answer an HTTP request, by method and route template', labelNames: ['method', 'route'], buckets: HTTP_BUCKETS, registers });
    this.taskRuns = new Counter({ name: 'leasehold_engine_task_runs_total', help: 'Lease task runs by kind (start, end) and outcome (done, later, failed, claim_lost)', labelNames: ['kind', 'outcome'], registers });
    this.taskLag = new Histogram({ name: 'leasehold_engine_task_lag_seconds', help: 'How late a lease task ran: now minus its due time, by kind', labelNames: ['kind'], buckets: LAG_BUCKETS, registers });
    this.cleaning = new Histogram({ name: 'leasehold_cleaning_duration_seconds', help: "From an allocation's end to its node clean and available again", buckets: CLEANING_BUCKETS, registers });
    this.repairs = new Counter({ name: 'leasehold_reconcile_repairs_total', help: 'Drift the reconciler repaired, by kind', labelNames: ['kind'], registers });
    this.passes = new Histogram({ name: 'leasehold_reconcile_pass_duration_seconds', help: 'Reconcile passes by outcome (ok, failed, skipped) and their duration', labelNames: ['outcome'], buckets: PASS_BUCKETS, registers });
    const backend = (name: 'ironic' | 'keystone', title: string) => ({
      duration: new Histogram({ name: `leasehold_${name}_request_duration_seconds`, help: `Requests to ${title} (each attempt), by method and path template`, labelNames: ['method', 'path'], buckets: BACKEND_BUCKETS, registers }),
      errors: new Counter({ name: `leasehold_${name}_request_errors_total`, help: `Requests to ${title} that failed, by method, path template and error (HTTP status, network, timeout)`, labelNames: ['method', 'path', 'error'], registers }),
    });
    const ironic = backend('ironic', 'Ironic');
    const keystone = backend('keystone', 'Keystone');
    this.backendDuration = { ironic: ironic.duration, keystone: keystone.duration };
    this.backendErrors = { ironic: ironic.errors, keystone: keystone.errors };
    this.scrapeGauges(registers);
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Where the scrape-time gauges read from (the server's store and console proxy, once they exist). */
  watch(sources: ScrapeSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  httpRequest(r: { readonly method: string; readonly route: string; readonly status: number; readonly seconds: number }): void {
    this.httpRequests.inc({ method: r.method, route: r.route, status: String(r.status) });
    this.httpDuration.observe({ method: r.method, route: r.route }, r.seconds);
  }

  taskRun(r: { readonly kind: string; readonly outcome: TaskRunOutcome; readonly lagSeconds: number }): void {
    this.taskRuns.inc({ kind: r.kind, outcome: r.outcome });
    this.taskLag.observe({ kind: r.kind }, r.lagSeconds);
  }

  cleaned(seconds: number): void {
    this.cleaning.observe(seconds);
  }

  reconcileRepairs(kind: string, count: number): void {
    // A zero still creates the series, so a rate() over it exists before the first repair of its kind.
    this.repairs.inc({ kind }, count);
  }

  reconcilePass(outcome: 'ok' | 'failed' | 'skipped', seconds: number): void {
    this.passes.observe({ outcome }, seconds);
  }

  backendRequest(c: { readonly backend: 'ironic' | 'keystone'; readonly method: string; readonly path: string; readonly seconds: number; readonly error: string | null }): void {
    this.backendDuration[c.backend].observe({ method: c.method, path: c.path }, c.seconds);
    if (c.error !== null) this.backendErrors[c.backend].inc({ method: c.method, path: c.path, error: c.error });
  }

  /** The gauges read when scraped: one store round trip per table, the pool's and the consoles' own counters. */
  private scrapeGauges(registers: Registry[]): void {
    const sources = () => this.sources;
    // Registered first, so read first: the pool as it was before this scrape's own queries took a connection.
    const pool = () => sources().store?.stats.pool();
    new Gauge({
      name: 'leasehold_db_pool_connections',
      help: 'Database connections by state (in_use, idle); PGlite: its one session',
      labelNames: ['state'],
      registers,
      collect() {
        this.set({ state: 'in_use' }, pool()?.in_use ?? 0);
        this.set({ state: 'idle' }, pool()?.idle ?? 0);
      },
    });
    new Gauge({
      name: 'leasehold_db_pool_waiting',
      help: 'Queries waiting for a database connection',
      registers,
      collect() {
        this.set(pool()?.waiting ?? 0);
      },
    });
    new Gauge({
      name: 'leasehold_db_pool_max',
      help: 'Most database connections this process opens',
      registers,
      collect() {
        this.set(pool()?.max ?? 0);
      },
    });
    // prom-client asks every metric at once; the four share one read of the store per scrape (the first asks).
    let reading: Promise<StoreCounts | null> | null = null;
    const counts = (): Promise<StoreCounts | null> => {
      reading ??= readCounts(sources().store).finally(() => {
        reading = null;
      });
      return reading;
    };
    new Gauge({
      name: 'leasehold_store_up',
      help: 'Whether the store answered the counts of this scrape (1) or not (0)',
      registers,
      async collect() {
        this.set((await counts()) ? 1 : 0);
      },
    });
    new Gauge({
      name: 'leasehold_leases',
      help: 'Leases by state',
      labelNames: ['state'],
      registers,
      async collect() {
        const c = await counts();
        this.reset();
        // Every known state is present, zero included: `leasehold_leases{state="failed"} > 0` always has a series.
        if (c) for (const state of LEASE_STATES) this.set({ state }, c.leases.get(state) ?? 0);
      },
    });
    new Gauge({
      name: 'leasehold_allocations',
      help: 'Allocations (one node of a lease) by state',
      labelNames: ['state'],
      registers,
      async collect() {
        const c = await counts();
        this.reset();
        if (c) for (const state of Object.values(AllocationState)) this.set({ state }, c.allocations.get(state) ?? 0);
      },
    });
    new Gauge({
      name: 'leasehold_nodes',
      help: "Live nodes by Ironic's provision state and Leasehold's quarantine",
      labelNames: ['provision_state', 'quarantined'],
      registers,
      async collect() {
        const c = await counts();
        // Reset first: a provision state no node is in any more disappears rather than keeping its last count.
        this.reset();
        for (const n of c?.nodes ?? []) this.set({ provision_state: n.provision_state, quarantined: String(n.quarantined) }, n.count);
      },
    });
    new Gauge({
      name: 'leasehold_console_connections',
      help: 'Serial console connections open on this process',
      registers,
      collect() {
        this.set(sources().consoles?.openConnections ?? 0);
      },
    });
  }
}
