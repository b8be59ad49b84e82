import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, freemem, totalmem, platform, release, arch } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { postgresVersion } from './databases.js';

export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memory: string;
  readonly os: string;
  readonly node: string;
  readonly postgres: string | null;
  readonly pglite: string;
}

/** What the figures were measured on. */
export async function machineInfo(adminUrl: string | null): Promise<MachineInfo> {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at start)`,
    os: `${platform()} ${release()} ${arch()}`,
    node: process.version,
    postgres: adminUrl ? shortVersion(await postgresVersion(adminUrl)) : null,
    pglite: await pgliteVersion(),
  };
}

async function pgliteVersion(): Promise<string> {
  let pkg = '?';
  try {
    const require = createRequire(import.meta.url);
    // The package's exports hide package.json: walk up from its entry point.
    let dir = dirname(require.resolve('@electric-sql/pglite'));
    while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
    pkg = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    /* exports may hide package.json: the server version is enough */
  }
  const db = await PGlite.create();
  try {
    const { rows } = await db.query<{ v: string }>('select version() as v');
    return `${pkg} (${shortVersion(rows[0]!.v)})`;
  } finally {
    await db.close();
  }
}

/** "PostgreSQL 15.20 (Debian …) on x86_64…" → "PostgreSQL 15.20". */
function shortVersion(v: string): string {
  return v.match(/^PostgreSQL [\d.]+/)?.[0] ?? v;
}
