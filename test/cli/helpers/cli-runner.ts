import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CloudFilePlaces } from '../../../src/cli/keystone/clouds-yaml.js';
import { run } from '../../../src/cli/run.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export const FIXED_NOW = new Date('2030-01-01T00:00:00.000Z');

export interface RunOptions {
  /** The clock; FIXED_NOW unless given. */
  readonly now?: () => Date;
  /** What `--wait` sleeps with; give one (see fakeClock) so a test never waits for real. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Where ./clouds.yaml and /etc/openstack are; by default an empty private directory, never the machine's. */
  readonly cloudFilePlaces?: CloudFilePlaces;
}

let privateHome: string | undefined;

/**
 * A private empty directory standing in for HOME, the current directory and /etc/openstack, so no test reads or
 * writes the machine's ~/.config, ~/.cache/leasehold, ./clouds.yaml or /etc/openstack. Removed when the process ends.
 */
function isolatedHome(): string {
  if (!privateHome) {
    const dir = mkdtempSync(join(tmpdir(), 'leasehold-cli-home-'));
    privateHome = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return privateHome;
}

/**
 * Runs the CLI in-process with captured output, the given environment only (plus a private empty HOME unless it
 * gives one), and a fixed clock.
 */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined> = {},
  options: RunOptions = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    env: { HOME: isolatedHome(), ...env },
    now: options.now ?? (() => FIXED_NOW),
    ...(options.sleep ? { sleep: options.sleep } : {}),
    cloudFilePlaces: options.cloudFilePlaces ?? { cwd: isolatedHome(), siteConfigDirs: [join(isolatedHome(), 'etc-openstack')] },
  });
  return { code, stdout, stderr };
}

/** A private temporary directory for config files, removed by the returned cleanup. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-cli-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A clock that only moves when the CLI sleeps: instant tests of polling and timeouts. Records every sleep. */
export function fakeClock(start: Date = FIXED_NOW): { now: () => Date; sleep: (ms: number) => Promise<void>; sleeps: number[] } {
  let t = start.getTime();
  const sleeps: number[] = [];
  return {
    now: () => new Date(t),
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
    sleeps,
  };
}
