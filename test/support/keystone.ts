/**
 * A real OpenStack Keystone (Debian's Zed package, SQLite, uwsgi on a loopback port) for end-to-end tests, driven
 * by scripts/keystone-standalone.sh, and an Ironic that validates tokens against it. Every helper is one or two
 * REST calls from Node: the `openstack` CLI costs 2.5-4 s a call (Python's start-up), a REST call ≈ 20 ms.
 * Facts behind it: shared/notes/openstack-lab.md.
 *
 *   const avail = keystoneAvailable();
 *   describe.skipIf(!avail.ok)('with Keystone', () => {
 *     let ks: KeystoneHandle;
 *     beforeAll(async () => { ks = await startKeystone(); }, 300_000);
 *     afterAll(() => ks?.stop());
 *     it('…', async () => {
 *       const owner = await ks.createProject('owner-a');
 *       const ada = await ks.createUser('ada', { project: owner.id, roles: ['member'] });
 *       const { token } = await ks.issueToken({ user: ada, project: owner.id });
 *       const ironic = await startIronicWithKeystone(ks); // Ironic in the catalog as `baremetal`
 *     });
 *   });
 *
 * One Keystone per test file: ≈ 3 s from a bootstrapped seed (made once per machine and package version, ≈ 11 s),
 * ≈ 8-19 s bootstrapping its own (with `adminPassword`). Keystones from one seed share its admin user id and its
 * fernet keys: one's token validates at another. Outside CI a missing Keystone skips loudly; under
 * CI (`process.env.CI` set) it is an error.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startIronic, type IronicHandle, type StartIronicOptions } from './ironic.js';
import { KeystoneApi, tokenSource } from './keystone-api.js';
import { ownedInstances } from './owned-instances.js';
import { announceUnavailable, onceInstaller, scriptRunner } from './standalone-script.js';

export * from './keystone-api.js';

export const KEYSTONE_SCRIPT = fileURLToPath(new URL('../../scripts/keystone-standalone.sh', import.meta.url));

/** The packaged programs the fixture starts or the suites call (the CLIs from Debian's /usr/bin/python3). */
const REQUIRED_BINARIES = [
  '/usr/bin/keystone-manage',
  '/usr/bin/keystone-wsgi-public',
  '/usr/bin/uwsgi',
  '/usr/lib/uwsgi/plugins/python3_plugin.so',
  '/usr/bin/openstack',
  '/usr/bin/baremetal',
];

export type KeystoneAvailability = { ok: true } | { ok: false; reason: string };

export interface KeystoneTimings {
  /** Time `install` took in this process; 0 when the packages were there already. */
  installMs: number;
  /** Making the bootstrapped seed in this process; 0 when it was there already (or not used). */
  seedMs: number;
  /** `start` until GET /v3 answered 200 and the default roles existed (a bootstrap of its own included). */
  startMs: number;
}

export interface KeystoneHandle extends KeystoneApi {
  readonly dataDir: string;
  readonly timings: KeystoneTimings;
  /** Stops Keystone and removes the data dir (kept with LEASEHOLD_KEEP_KEYSTONE set); idempotent. */
  stop(): Promise<void>;
  /** Stops the process, keeps the data dir (users, projects, keys): Keystone is down until restart(). */
  halt(): Promise<void>;
  /**
   * Starts the same Keystone again on the same port (halting it first if it runs): the same users, projects and
   * keys, so every token issued before still validates. `tokenExpirationSeconds` changes the lifetime of the
   * tokens issued from now on (and for later restarts).
   */
  restart(opts?: { tokenExpirationSeconds?: number }): Promise<void>;
}

export interface StartKeystoneOptions {
  /** Default: a free port. */
  port?: number;
  /** Default: the seed's (random). A password of one's own costs a bootstrap of one's own (≈ 8 s more). */
  adminPassword?: string;
  /** Lifetime of every token, in seconds (default 3600), e.g. 10 to see tokens expire. */
  tokenExpirationSeconds?: number;
}

// ------------------------------------------------------------------------------------------------ availability

let availability: KeystoneAvailability | undefined;

function computeAvailability(): KeystoneAvailability {
  if (process.platform !== 'linux') return { ok: false, reason: `Keystone tests need Linux (this is ${process.platform})` };
  if (!existsSync(KEYSTONE_SCRIPT)) return { ok: false, reason: `missing ${KEYSTONE_SCRIPT}` };
  const missing = REQUIRED_BINARIES.filter((b) => !existsSync(b));
  if (missing.length === 0) return { ok: true };
  if (!existsSync('/usr/bin/apt-get') || !existsSync('/usr/bin/dpkg-query')) {
    return { ok: false, reason: `Keystone is not installed (${missing.join(', ')} missing) and there is no apt-get` };
  }
  if (process.getuid?.() !== 0) {
    return {
      ok: false,
      reason: `Keystone is not installed (${missing.join(', ')} missing) and installing needs root: run 'sudo ${KEYSTONE_SCRIPT} install'`,
    };
  }
  return { ok: true }; // installable: startKeystone() installs it
}

/**
 * Whether startKeystone() can work here: the packages are installed, or installable (root with apt-get).
 * Under CI an unavailable Keystone is an error, never a skip: this throws.
 */
export function keystoneAvailable(): KeystoneAvailability {
  availability ??= computeAvailability();
  announceUnavailable('Keystone', availability);
  return availability;
}

// ------------------------------------------------------------------------------------------------ the script

const runScript = scriptRunner(KEYSTONE_SCRIPT);

/** Installs the packages once per process (a no-op when present); resolves to the milliseconds it took. */
export const ensureKeystoneInstalled = onceInstaller('keystone-standalone.sh', runScript, REQUIRED_BINARIES);

// uwsgi runs in its own session (setsid): a test process that exits without stop() must not leave it behind.
const DATA_DIR_PREFIX = 'leasehold-keystone-';
const instances = ownedInstances({
  prefix: DATA_DIR_PREFIX,
  pidFile: 'keystone.pid', // uwsgi's master (die-on-term: its worker goes with it)
  label: 'Keystone',
  stop: (dir) => runScript(['stop', dir], 60_000),
});

/** Stops Keystones that earlier test processes started and could not stop (killed by a timeout, SIGKILL). */
export function reapStaleKeystones(): Promise<void> {
  return instances.reap();
}

// ------------------------------------------------------------------------------------------------ the seed

const SEED_PREFIX = 'leasehold-kseed-';
let seeding: Promise<string> | undefined;
let seededHere = false;

/**
 * A bootstrapped data dir (database, keys, admin) that Keystones start from by copying it (`start --from`):
 * keystone-manage's four steps cost ≈ 8-19 s a Keystone otherwise. One per machine, script and package version,
 * made by whichever test process needs it first (a loser of the race discards its copy).
 */
function keystoneSeed(): Promise<string> {
  seeding ??= (async () => {
    const version = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'keystone'], { encoding: 'utf8' });
    const key = createHash('sha256').update(readFileSync(KEYSTONE_SCRIPT)).update(version).digest('hex').slice(0, 16);
    const seed = join(tmpdir(), `${SEED_PREFIX}${key}`);
    if (existsSync(join(seed, 'bootstrapped'))) return seed;
    for (const name of readdirSync(tmpdir())) {
      if (name.startsWith(SEED_PREFIX)) rmSync(join(tmpdir(), name), { recursive: true, force: true }); // outdated
    }
    // Made under the data-dir prefix with an owner: if this process dies meanwhile, the reaper removes it.
    const dir = instances.create();
    seededHere = true;
    const res = await runScript(['bootstrap', dir], 300_000);
    if (res.code !== 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`keystone-standalone.sh bootstrap failed (${res.code}):\n${res.stderr.slice(-4000)}`);
    }
    rmSync(join(dir, 'owner.pid'));
    try {
      renameSync(dir, seed);
    } catch {
      rmSync(dir, { recursive: true, force: true }); // another process made it first
    }
    return seed;
  })();
  seeding.catch(() => (seeding = undefined));
  return seeding;
}

// ------------------------------------------------------------------------------------------------ start

/** Starts a new Keystone (installing the packages first when needed); one retry on another port if it fails. */
export async function startKeystone(options: StartKeystoneOptions = {}): Promise<KeystoneHandle> {
  const avail = keystoneAvailable();
  if (!avail.ok) throw new Error(`cannot start Keystone: ${avail.reason}`);
  const installMs = await ensureKeystoneInstalled();
  await reapStaleKeystones();

  const s0 = performance.now();
  const seed = options.adminPassword ? undefined : await keystoneSeed();
  const seedMs = seededHere ? Math.round(performance.now() - s0) : 0;
  const adminPassword = options.adminPassword ?? (seed ? adminPasswordIn(seed) : randomBytes(15).toString('base64url'));
  let lastError = '';
  for (let attempt = 0; attempt < (options.port ? 1 : 2); attempt++) {
    const port = options.port ?? (await freePort());
    const dataDir = instances.create();
    const args = ['start', dataDir, '--port', String(port)];
    if (options.tokenExpirationSeconds) args.push('--token-expiration', String(options.tokenExpirationSeconds));
    if (seed) args.push('--from', seed);
    instances.started(dataDir);
    const t0 = performance.now();
    // The password goes through the environment: command lines are visible to every process.
    const res = await runScript(args, 180_000, { KEYSTONE_ADMIN_PASSWORD: seed ? '' : adminPassword });
    const startMs = Math.round(performance.now() - t0);
    const url = res.stdout.trim().split('\n').pop() ?? '';
    if (res.code === 0 && /^http:\/\/127\.0\.0\.1:\d+\/v3$/.test(url)) {
      return makeHandle(url, dataDir, adminPassword, { installMs, seedMs, startMs }, args);
    }
    lastError = `keystone-standalone.sh start (port ${port}) failed (${res.code}):\n${res.stderr.slice(-6000)}`;
    await runScript(['stop', dataDir], 60_000);
    instances.stopped(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }
  throw new Error(lastError);
}

function adminPasswordIn(dataDir: string): string {
  return (JSON.parse(readFileSync(join(dataDir, 'admin.json'), 'utf8')) as { password: string }).password;
}

function makeHandle(url: string, dataDir: string, adminPassword: string, timings: KeystoneTimings, startArgs: string[]): KeystoneHandle {
  let args = startArgs;
  const handleTimings = { ...timings };
  const api = new KeystoneApi(url, { username: 'admin', password: adminPassword, projectName: 'admin' });
  let stopped: Promise<void> | undefined;

  async function halt(): Promise<void> {
    if (stopped) throw new Error('this Keystone was stopped for good (stop())');
    const res = await runScript(['stop', dataDir], 60_000);
    if (res.code !== 0) throw new Error(`keystone-standalone.sh stop failed (${res.code}):\n${res.stderr}`);
  }

  return Object.assign(api, {
    dataDir,
    timings: handleTimings,
    halt,
    async restart(opts: { tokenExpirationSeconds?: number } = {}) {
      if (stopped) throw new Error('this Keystone was stopped for good (stop())');
      if ((await runScript(['status', dataDir], 30_000)).code === 0) await halt();
      if (opts.tokenExpirationSeconds) {
        const i = args.indexOf('--token-expiration');
        args = [...(i >= 0 ? [...args.slice(0, i), ...args.slice(i + 2)] : args), '--token-expiration', String(opts.tokenExpirationSeconds)];
      }
      const t0 = performance.now();
      const res = await runScript(args, 120_000);
      if (res.code !== 0 || res.stdout.trim().split('\n').pop() !== url) {
        throw new Error(`keystone-standalone.sh start (restart on ${url}) failed (${res.code}):\n${res.stderr.slice(-6000)}`);
      }
      handleTimings.startMs = Math.round(performance.now() - t0);
    },
    stop() {
      stopped ??= (async () => {
        const res = await runScript(['stop', dataDir], 60_000);
        instances.stopped(dataDir);
        if (res.code !== 0) throw new Error(`keystone-standalone.sh stop failed (${res.code}):\n${res.stderr}`);
        if (!process.env.LEASEHOLD_KEEP_KEYSTONE) rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  });
}

// ------------------------------------------------------------------------------------------------ Ironic

export interface IronicWithKeystoneOptions extends Omit<StartIronicOptions, 'auth' | 'keystone' | 'user' | 'password'> {
  /** The service user Ironic validates tokens as; default `ironic`. */
  serviceUser?: string;
}

/**
 * Creates (or re-keys) Ironic's service user — admin and service on project `service` — starts Ironic with
 * auth_strategy = keystone against `keystone`, and registers it in the catalog as the `baremetal` service (public
 * and internal, RegionOne). The handle's requests carry the service user's token (every node is visible);
 * `request(…, { token })` calls as a user.
 */
export async function startIronicWithKeystone(keystone: KeystoneApi, options: IronicWithKeystoneOptions = {}): Promise<IronicHandle> {
  const { serviceUser = 'ironic', ...rest } = options;
  const { user, project } = await keystone.ensureServiceUser(serviceUser);
  const token = tokenSource(() => keystone.issueToken({ user, project: project.id }));
  const ironic = await startIronic({
    ...rest,
    auth: 'keystone',
    keystone: { url: keystone.url, user: user.name, password: user.password, project: 'service', token },
  });
  try {
    await keystone.setEndpoints('baremetal', 'ironic', { public: ironic.url, internal: ironic.url });
  } catch (err) {
    await ironic.stop();
    throw err;
  }
  return ironic;
}
