/**
 * A PostgreSQL server of the suite's own, for the fault suites (test/faults/): they stop, restart and kill it, which
 * they must never do to the machine's shared server on 127.0.0.1:5432 that the other suites use at the same time.
 * Made from the machine's own PostgreSQL binaries (Debian's /usr/lib/postgresql/<version>/bin): `initdb` into a
 * temporary directory (≈ 1.5 s), one `postgres` on a free loopback port, trust auth, fsync off (its data is thrown
 * away). As root, the binaries run as the `postgres` user (initdb refuses root).
 *
 *   const pg = await startPrivatePostgres();
 *   const url = await pg.createDatabase('faults');
 *   await pg.restart();   // pg_ctl restart -m fast: every session is cut, the data stays
 *   await pg.stop();      // and later pg.start(): an outage
 *   await pg.destroy();
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ironic.js';

export interface PrivatePostgres {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database: string): string;
  /** Creates an empty database and resolves to its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (`-m fast`: sessions are cut, the data is kept; `immediate`: as if it crashed). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops and starts it again; resolves to the milliseconds it was down. */
  restart(): Promise<number>;
  /** Ends every session of `database` but this one (pg_terminate_backend); resolves to how many. */
  terminateBackends(database: string): Promise<number>;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

export type PostgresAvailability = { readonly ok: true; readonly bin: string } | { readonly ok: false; readonly reason: string };

/** Where the server binaries are (the newest version installed), or why there are none. */
export function privatePostgresAvailable(): PostgresAvailability {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  const availability: PostgresAvailability = newest
    ? { ok: true, bin: join(root, newest, 'bin') }
    : { ok: false, reason: `no PostgreSQL server binaries under ${root} (apt-get install postgresql)` };
  if (!availability.ok) {
    if (process.env.CI) throw new Error(`a PostgreSQL server is required under CI: ${availability.reason}`);
    process.stderr.write(`\n*** SKIPPING fault tests that need their own PostgreSQL: ${availability.reason} ***\n\n`);
  }
  return availability;
}

const START_TIMEOUT_S = 30;

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const availability = privatePostgresAvailable();
  if (!availability.ok) throw new Error(availability.reason);
  const { bin } = availability;
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-faults-pg-'));
  const asRoot = userInfo().uid === 0;
  if (asRoot) chownSync(dir, postgresUid(), postgresGid());
  const data = join(dir, 'data');
  const run = (tool: string, args: readonly string[], timeoutMs = 60_000) =>
    exec(asRoot ? 'runuser' : join(bin, tool), asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : [...args], timeoutMs);

  await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  let port = 0;
  const options = () => `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const start = async () => {
    // One retry with another port: the free port may have been taken between freePort() and the listen.
    for (let attempt = 1; ; attempt++) {
      if (port === 0 || attempt > 1) port = await freePort();
      try {
        await run('pg_ctl', ['-D', data, '-o', options(), '-l', join(dir, 'server.log'), '-w', '-t', String(START_TIMEOUT_S), 'start']);
        return;
      } catch (err) {
        if (attempt >= 2) throw err;
      }
    }
  };
  await start();
  const fixedPort = port;
  const url = (database: string) => `postgres://postgres@127.0.0.1:${fixedPort}/${database}`;
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url('postgres') });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const stop = (mode: 'fast' | 'immediate' = 'fast') => run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', String(START_TIMEOUT_S), 'stop']).then(() => undefined);
  const restartOnSamePort = () =>
    run('pg_ctl', ['-D', data, '-o', options(), '-l', join(dir, 'server.log'), '-w', '-t', String(START_TIMEOUT_S), 'start']).then(() => undefined);

  return {
    port: fixedPort,
    url,
    createDatabase: async (name) => {
      await admin((c) => c.query(`create database "${name.replaceAll('"', '""')}"`));
      return url(name);
    },
    stop,
    // The URL the replicas were given must stay right: always the same port after the first start.
    start: restartOnSamePort,
    restart: async () => {
      const t0 = performance.now();
      await stop('fast');
      await restartOnSamePort();
      return Math.round(performance.now() - t0);
    },
    terminateBackends: (database) =>
      admin(async (c) => {
        const res = await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
        return res.rowCount ?? 0;
      }),
    destroy: async () => {
      await stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function exec(file: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, [...args], { timeout: timeoutMs, killSignal: 'SIGKILL', cwd: '/' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${err.message}\n${String(stderr).slice(-2000)}`));
      else resolve(String(stdout));
    });
  });
}

function postgresUid(): number {
  return Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
}

function postgresGid(): number {
  return Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
}
