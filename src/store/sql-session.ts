/**
 * One exclusive database session outside Kysely: what migrations need (a multi-statement script runs through
 * the simple query protocol, which Kysely's parameterised path never uses).
 */
export interface SqlSession {
  query<R = Record<string, unknown>>(sqlText: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs several statements in one go (pg: a query without parameters; PGlite: `exec`). */
  exec(script: string): Promise<void>;
}

/** Lends a session to `fn` and takes it back afterwards (a pooled client, or PGlite's single session). */
export type SessionRunner = <T>(fn: (session: SqlSession) => Promise<T>) => Promise<T>;
