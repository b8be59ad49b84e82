/**
 * Counts for the metrics, read at scrape time (store.stats): each one aggregate query over an indexed table, so a
 * scrape every 15 s costs a few milliseconds, on any number of replicas.
 */
export interface StatsStore {
  /** Every lease by state (`pending`, `active`, ... `failed`): states with none are absent. */
  leasesByState(): Promise<ReadonlyMap<string, number>>;
  /** Every allocation by state (`reserved`, ... `cancelled`): states with none are absent. */
  allocationsByState(): Promise<ReadonlyMap<string, number>>;
  /** Live nodes (removed ones not counted) by Ironic's provision state and whether Leasehold quarantined them. */
  nodesByState(): Promise<readonly NodeStateCount[]>;
  /** The connections to the database now (no query: the pool's own counters). */
  pool(): PoolStats;
}

export interface NodeStateCount {
  readonly provision_state: string;
  readonly quarantined: boolean;
  readonly count: number;
}

/**
 * PostgreSQL: the pg pool's connections checked out (`in_use`), open and idle, and requests waiting for one.
 * PGlite: its one session, `in_use` 1 while a query or transaction holds it, `waiting` the callers queued behind.
 */
export interface PoolStats {
  readonly max: number;
  readonly in_use: number;
  readonly idle: number;
  readonly waiting: number;
}
