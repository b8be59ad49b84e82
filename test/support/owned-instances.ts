/**
 * Services the suites start in their own session (setsid: Ironic, Keystone's uwsgi), each in a data dir under the
 * temp dir that records the test process owning it (`owner.pid`). A test process that exits without stopping one
 * signals it on the way out; one killed outright (a timeout, SIGKILL) leaves it to the next process's reaper, which
 * stops and removes the dirs whose owner is gone and leaves live owners' (other workers, other runs) alone.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface OwnedInstancesOptions {
  /** The data dirs' name prefix in the temp dir, e.g. `leasehold-ironic-`. */
  readonly prefix: string;
  /** The file in a data dir holding the service's main pid (signalled at exit). */
  readonly pidFile: string;
  /** Pid files of the instance's other processes, signalled at exit too (e.g. Neutron's ironic-neutron-agent). */
  readonly extraPidFiles?: readonly string[];
  /** What it is, for the reaper's message: "Ironic". */
  readonly label: string;
  /** Stops the service of a data dir (its script's `stop`). */
  readonly stop: (dataDir: string) => Promise<unknown>;
}

export interface OwnedInstances {
  /** A new data dir owned by this process. */
  create(): string;
  /** The service of `dataDir` runs: signal it if this process exits first. */
  started(dataDir: string): void;
  /** It was stopped: nothing to do at exit. */
  stopped(dataDir: string): void;
  /** Stops and removes what dead test processes left (once per process). */
  reap(): Promise<void>;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

export function ownedInstances(options: OwnedInstancesOptions): OwnedInstances {
  const running = new Set<string>();
  let exitHookInstalled = false;
  let reaped: Promise<void> | undefined;
  const tag = options.label.toLowerCase();
  return {
    create() {
      const dir = mkdtempSync(join(tmpdir(), options.prefix));
      writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
      return dir;
    },
    started(dataDir) {
      running.add(dataDir);
      if (exitHookInstalled) return;
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const dir of running) {
          for (const file of [options.pidFile, ...(options.extraPidFiles ?? [])]) {
            const pid = readPid(join(dir, file));
            try {
              if (pid > 0) process.kill(pid, 'SIGTERM');
            } catch {
              // already gone
            }
          }
        }
      });
    },
    stopped(dataDir) {
      running.delete(dataDir);
    },
    reap() {
      reaped ??= (async () => {
        let names: string[] = [];
        try {
          names = readdirSync(tmpdir()).filter((n) => n.startsWith(options.prefix));
        } catch {
          return;
        }
        for (const name of names) {
          const dir = join(tmpdir(), name);
          // No owner recorded yet: maybe being created right now, not ours to judge.
          const owner = readPid(join(dir, 'owner.pid'));
          if (!owner || processAlive(owner)) continue;
          process.stderr.write(`[${tag}] reaping a stale ${options.label} in ${dir} (owner pid ${owner} is gone)\n`);
          await options.stop(dir);
          rmSync(dir, { recursive: true, force: true });
        }
      })();
      return reaped;
    },
  };
}
