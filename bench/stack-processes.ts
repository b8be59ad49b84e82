import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './stats.js';

/**
 * The processes section 4 starts (a Keystone, an Ironic, a `leasehold serve`): their data dirs, their stops, and
 * what happens to them when the bench itself dies. Keystone and Ironic run in their own sessions (setsid), so a
 * bench killed before its cleanup would leave them running; every data dir records the bench's pid in owner.pid
 * and uses a prefix that the test suites' reapers (test/support/keystone.ts, test/support/ironic.ts) also know, and
 * `reapStale()` here stops what an earlier, dead bench left. SIGINT, SIGTERM and SIGHUP run the stops first.
 */

export type Cleanups = Array<() => Promise<void>>;

export const KEYSTONE_SCRIPT = fileURLToPath(new URL('../scripts/keystone-standalone.sh', import.meta.url));
export const IRONIC_SCRIPT = fileURLToPath(new URL('../scripts/ironic-standalone.sh', import.meta.url));
export const LEASEHOLD_BIN = fileURLToPath(new URL('../bin/leasehold.js', import.meta.url));

/** Data-dir prefixes: Keystone's and Ironic's are the test reapers' own; the server's is the bench's. */
export const PREFIX = { keystone: 'leasehold-keystone-', ironic: 'leasehold-ironic-', server: 'leasehold-bench-gateway-' } as const;

export interface ScriptResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `bash script args…`, killed after `timeoutMs`; secrets go in `env`, not on a command line, where the script allows. */
export function runScript(script: string, args: readonly string[], timeoutMs: number, env: Record<string, string> = {}): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const options = { timeout: timeoutMs, killSignal: 'SIGKILL' as const, maxBuffer: 16 * 2 ** 20, env: { ...process.env, ...env } };
    execFile('bash', [script, ...args], options, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

/** A new data dir under `prefix` in the temp dir, owned by this process (owner.pid). */
export function ownedDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
  return dir;
}

export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(20);
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops what a dead owner left under the three prefixes: Keystones and Ironics through their scripts, a `leasehold
 * serve` by its server.pid (only if that process still has the dir as its LEASEHOLD_DATA_DIR). Dirs without an
 * owner.pid (being made right now, or a Keystone seed) and dirs of a live owner are left alone.
 */
export async function reapStale(say: (message: string) => void): Promise<void> {
  let names: string[] = [];
  try {
    names = readdirSync(tmpdir()).filter((n) => Object.values(PREFIX).some((p) => n.startsWith(p)));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(tmpdir(), name);
    const owner = readPid(join(dir, 'owner.pid'));
    if (!owner || processAlive(owner)) continue;
    say(`reaping ${dir} (its owner, pid ${owner}, is gone)`);
    if (name.startsWith(PREFIX.keystone)) await runScript(KEYSTONE_SCRIPT, ['stop', dir], 60_000);
    else if (name.startsWith(PREFIX.ironic)) await runScript(IRONIC_SCRIPT, ['stop', dir], 60_000);
    else await killServer(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function killServer(dir: string): Promise<void> {
  const pid = readPid(join(dir, 'server.pid'));
  if (!pid) return;
  try {
    if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`LEASEHOLD_DATA_DIR=${dir}`)) return;
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 100 && processAlive(pid); i++) await sleep(100);
    if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  } catch {
    // gone already, or not ours
  }
}

function readPid(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

// ------------------------------------------------------------------------------------------------ signals

const active = new Set<Cleanups>();
let handlersInstalled = false;

/**
 * Runs `cleanups` (last first) if the bench is interrupted (SIGINT, SIGTERM, SIGHUP) while they are registered;
 * the returned function unregisters them (the caller runs them itself on the normal path).
 */
export function stopOnSignal(cleanups: Cleanups): () => void {
  active.add(cleanups);
  if (!handlersInstalled) {
    handlersInstalled = true;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => {
        process.stderr.write(`[bench] ${signal}: stopping what section 4 started\n`);
        const all = [...active].flatMap((c) => [...c].reverse());
        const bounded = Promise.race([
          (async () => {
            for (const cleanup of all) await cleanup().catch(() => undefined);
          })(),
          sleep(90_000),
        ]);
        void bounded.finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
      });
    }
  }
  return () => active.delete(cleanups);
}
