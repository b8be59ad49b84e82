import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/leasehold.js', import.meta.url));

export interface ServerProcess {
  readonly url: string;
  readonly proc: ChildProcess;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** SIGTERM, then wait for the exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  kill(): void;
}

/** Starts `leasehold serve --port 0` as a real process and waits for the URL it prints. */
export function startServerProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LEASEHOLD_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not start in ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    const onData = () => {
      const m = /listening on (http:\/\/\S+)/.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      proc.stdout!.off('data', onData);
      resolve({
        url: m[1]!,
        proc,
        output: () => stdout,
        stop: async () => {
          proc.kill('SIGTERM');
          return exited;
        },
        kill: () => proc.kill('SIGKILL'),
      });
    };
    proc.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    });
  });
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the real `leasehold` binary. */
export function cli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: env.HOME ?? '/tmp', ...env } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs the CLI with --json and parses its output; throws with the CLI's stderr when it fails. */
export async function cliJson(args: string[], env: Record<string, string>): Promise<any> {
  const res = await cli([...args, '--json'], env);
  if (res.code !== 0) throw new Error(`leasehold ${args.join(' ')} exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout);
}
