/**
 * The real `leasehold serve` process for end-to-end suites (simulated hardware, a real Ironic, PostgreSQL, several
 * replicas): a fresh data dir, a chosen admin token, no cleaning gap; callers of its API by token; kill (SIGKILL),
 * restart on the same data and environment, stop; its log for failure messages.
 *
 *   const lh = await startLeaseholdServer({ LEASEHOLD_SIMULATED_NODES: JSON.stringify(nodes) });
 *   const ada = await lh.member('astro', 'ada');
 *   const lease = await ada.ok('POST', '/v1/leases', { nodes: ['gpu-1'], duration: '5s' });
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from './http.js';
import { startServerProcess, type ServerProcess } from './processes.js';

export const SERVER_ADMIN_TOKEN = 'lh_server-e2e-admin-token-0123456789abcdef';

export interface LeaseholdServer {
  readonly dataDir: string;
  /** The environment the server runs with (restart() uses it again). */
  readonly env: Readonly<Record<string, string>>;
  readonly url: string;
  readonly server: ServerProcess;
  readonly admin: Api;
  /** How the process ended last ("code 1, signal null"), or null while it runs (or after a kill/stop of ours). */
  readonly exit: string | null;
  api(token: string, name?: string): Api;
  /** Creates the project (unless it exists), a user in it and a token: an Api acting as that user. */
  member(project: string, user: string, role?: 'reader' | 'member' | 'manager'): Promise<Api>;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
  /** Starts the server again on the same data dir and environment; resolves to ms until it listened. */
  restart(): Promise<number>;
  /** SIGTERM; resolves to the exit code (null if it was killed). Removes the data dir unless keepData. */
  stop(opts?: { keepData?: boolean }): Promise<number | null>;
  /** Everything the server printed, across restarts (JSON log lines, for failure messages). */
  logTail(lines?: number): string;
}

/**
 * Starts `leasehold serve` with `env` over these defaults: a fresh data dir (or `LEASEHOLD_DATA_DIR`), the admin
 * token SERVER_ADMIN_TOKEN (or `LEASEHOLD_ADMIN_TOKEN`), no cleaning gap, warnings only in the log.
 */
export async function startLeaseholdServer(env: Record<string, string> = {}, opts: { readonly startTimeoutMs?: number } = {}): Promise<LeaseholdServer> {
  const dataDir = env.LEASEHOLD_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'leasehold-e2e-'));
  const full: Record<string, string> = {
    LEASEHOLD_DATA_DIR: dataDir,
    LEASEHOLD_ADMIN_TOKEN: SERVER_ADMIN_TOKEN,
    LEASEHOLD_CLEANING_GAP: '0s',
    LEASEHOLD_LOG_LEVEL: 'warn',
    ...env,
  };
  let earlierOutput = '';
  let stderr = '';
  let exit: string | null = null;
  let ours = false;
  /** Starts the process and keeps its stderr and how it exited (startServerProcess keeps stdout only). */
  const launch = async () => {
    const started = await startServerProcess(full, opts.startTimeoutMs ?? 60_000);
    ours = false;
    exit = null;
    started.proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    started.proc.once('exit', (code, signal) => {
      if (ours) return;
      exit = `code ${code}, signal ${signal}`;
      stderr += `\n[leasehold exited: ${exit}]\n`;
    });
    return started;
  };
  let server = await launch();
  const api = (token: string, name = 'caller') => new Api(() => server.url, token, name);
  const admin = api(full.LEASEHOLD_ADMIN_TOKEN!, 'admin');
  const projects = new Map<string, string>();

  const handle: LeaseholdServer = {
    dataDir,
    env: full,
    get url() {
      return server.url;
    },
    get server() {
      return server;
    },
    get exit() {
      return exit;
    },
    admin,
    api,
    async member(project, user, role = 'member') {
      let projectId = projects.get(project);
      if (!projectId) {
        const found = await admin.call('GET', `/v1/projects/${encodeURIComponent(project)}`);
        projectId = found.status === 200 ? (found.body.id as string) : (await admin.ok('POST', '/v1/projects', { name: project })).id;
        projects.set(project, projectId!);
      }
      const u = await admin.ok('POST', '/v1/users', { name: user, project_id: projectId, role });
      const token = (await admin.ok('POST', '/v1/tokens', { user_id: u.id })).token as string;
      return api(token, `${user}@${project}`);
    },
    async kill() {
      if (server.proc.exitCode !== null || server.proc.signalCode !== null) return;
      ours = true;
      const gone = new Promise((resolve) => server.proc.once('exit', resolve));
      server.kill();
      await gone;
    },
    async restart() {
      if (server.proc.exitCode === null && server.proc.signalCode === null) await handle.stop({ keepData: true });
      earlierOutput += server.output();
      const t0 = performance.now();
      server = await launch();
      return Math.round(performance.now() - t0);
    },
    async stop(o = {}) {
      let code: number | null = server.proc.exitCode;
      if (code === null && server.proc.signalCode === null) {
        ours = true;
        code = await server.stop();
      }
      if (!o.keepData) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
    logTail(lines = 60) {
      const out = (earlierOutput + server.output()).trimEnd().split('\n').slice(-lines).join('\n');
      return stderr.trim() ? `${out}\n---- stderr ----\n${stderr.trimEnd().split('\n').slice(-lines).join('\n')}` : out;
    },
  };
  return handle;
}
