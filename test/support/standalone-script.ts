import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * What the suites' three OpenStack fixtures (test/support/ironic.ts, keystone.ts, neutron-standalone.ts) share about
 * their scripts (scripts/*-standalone.sh): running one, installing its packages once per process, and saying loudly
 * when a suite cannot run here (under CI that is an error, never a skip).
 */

export interface ScriptResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `bash script args…`, killed after `timeoutMs`; secrets go in `env`, not on the command line. */
export function scriptRunner(script: string): (args: readonly string[], timeoutMs: number, env?: Record<string, string>) => Promise<ScriptResult> {
  return (args, timeoutMs, env = {}) =>
    new Promise((resolve) => {
      execFile(
        'bash',
        [script, ...args],
        { timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024, killSignal: 'SIGKILL', env: { ...process.env, ...env } },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });
}

/**
 * `script install`, once per process and only when one of `binaries` is missing; resolves to the milliseconds it
 * took (0 when installed already). A failed install is asked again by the next caller.
 */
export function onceInstaller(name: string, run: ReturnType<typeof scriptRunner>, binaries: readonly string[]): () => Promise<number> {
  let installation: Promise<number> | undefined;
  return () => {
    installation ??= (async () => {
      if (binaries.every((b) => existsSync(b))) return 0;
      const t0 = performance.now();
      const res = await run(['install'], 15 * 60_000);
      if (res.code !== 0) {
        installation = undefined;
        throw new Error(`${name} install failed (${res.code}):\n${res.stderr.slice(-4000)}`);
      }
      return Math.round(performance.now() - t0);
    })();
    return installation;
  };
}

/** A suite that cannot run here: an error under CI, a loud line otherwise (a skipped suite must not look passed). */
export function announceUnavailable(what: string, availability: { readonly ok: boolean; readonly reason?: string }): void {
  if (availability.ok) return;
  if (process.env.CI) throw new Error(`${what} is required under CI: ${availability.reason}`);
  process.stderr.write(`\n*** SKIPPING real-${what} tests: ${availability.reason} ***\n\n`);
}
