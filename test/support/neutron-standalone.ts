/**
 * A real OpenStack Neutron (Debian's neutron-server, Zed, ML2 flat+vlan, mechanism driver `baremetal`) with
 * ironic-neutron-agent, on MariaDB and a RabbitMQ vhost of its own, driven by scripts/neutron-standalone.sh.
 * test/support/neutron.ts builds the whole lab on it (Keystone, Neutron, Ironic with the neutron network
 * interface, the agent); suites use that. Facts behind it: shared/notes/openstack-lab.md (sections 5 and 6).
 *
 * Outside CI a machine without Neutron (or Keystone, Ironic, MariaDB, RabbitMQ) skips loudly; under CI
 * (`process.env.CI` set) it is an error. Instances left by dead test processes are reaped (owned-instances.ts),
 * their database and vhost with them. A fresh Neutron loads its schema from a dump the first one made
 * (`--schema-cache`, one per python3-neutron version): ≈ 3-6 s instead of ≈ 9-31 s of migrations.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, ironicAvailable } from './ironic.js';
import { keystoneAvailable, tokenSource, type KeystoneApi, type KeystoneUser } from './keystone.js';
import { NeutronApi, type NeutronAgent } from './neutron-api.js';
import { ownedInstances } from './owned-instances.js';
import { announceUnavailable, onceInstaller, scriptRunner } from './standalone-script.js';

export const NEUTRON_SCRIPT = fileURLToPath(new URL('../../scripts/neutron-standalone.sh', import.meta.url));

/** What the lab is configured with (the script's defaults): Leasehold's tests may rely on every value. */
export const LAB = {
  /** Project networks are VLANs on this physnet, ids from this range. */
  physnet: 'physnet1',
  vlanMin: 100,
  vlanMax: 199,
  /** The flat provider physnet, and the shared network on it that Ironic cleans and provisions on. */
  flatPhysnet: 'provnet',
  provisioningNetwork: 'prov-net',
  provisioningCidr: '10.10.0.0/24',
  /** Every Ironic port's local_link_connection names this switch. */
  switchId: '00:11:22:33:44:55',
  switchInfo: 'sw1',
  /** ironic-neutron-agent's report interval, seconds: a new node is bindable within about two of them. */
  reportIntervalSeconds: 2,
} as const;

const REQUIRED_BINARIES = ['/usr/bin/neutron-server', '/usr/bin/neutron-db-manage', '/usr/bin/ironic-neutron-agent'];

export type NeutronAvailability = { ok: true } | { ok: false; reason: string };

// ------------------------------------------------------------------------------------------------ availability

let availability: NeutronAvailability | undefined;

function tcpOpen(port: number): boolean {
  try {
    execFileSync('bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${port}`], { timeout: 3_000, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function computeAvailability(): NeutronAvailability {
  if (process.platform !== 'linux') return { ok: false, reason: `Neutron tests need Linux (this is ${process.platform})` };
  if (!existsSync(NEUTRON_SCRIPT)) return { ok: false, reason: `missing ${NEUTRON_SCRIPT}` };
  const missing = REQUIRED_BINARIES.filter((b) => !existsSync(b));
  if (missing.length && process.getuid?.() !== 0) {
    return { ok: false, reason: `Neutron is not installed (${missing.join(', ')}) and installing needs root: run 'sudo ${NEUTRON_SCRIPT} install'` };
  }
  if (missing.length && !existsSync('/usr/bin/apt-get')) return { ok: false, reason: `Neutron is not installed and there is no apt-get` };
  if (!existsSync('/usr/bin/mysql')) return { ok: false, reason: 'no mysql client (mariadb-client)' };
  if (!existsSync('/usr/sbin/rabbitmqctl')) return { ok: false, reason: 'no rabbitmqctl (rabbitmq-server): the lab makes a vhost per instance' };
  if (!tcpOpen(3306)) return { ok: false, reason: 'MariaDB is not answering on 127.0.0.1:3306 (start-stop-daemon --start --background --exec /usr/sbin/mariadbd)' };
  if (!tcpOpen(5672)) return { ok: false, reason: 'RabbitMQ is not answering on 127.0.0.1:5672 (rabbitmq-server -detached)' };
  return { ok: true };
}

/**
 * Whether startNeutronLab() can work here: Keystone and Ironic available, Neutron installed or installable, MariaDB
 * and RabbitMQ answering. Under CI an unavailable Neutron is an error, never a skip: this throws.
 */
export function neutronAvailable(): NeutronAvailability {
  if (!availability) {
    const ks = keystoneAvailable();
    const ironic = ironicAvailable();
    availability = !ks.ok ? ks : !ironic.ok ? ironic : computeAvailability();
  }
  announceUnavailable('Neutron', availability);
  return availability;
}

// ------------------------------------------------------------------------------------------------ the script

const runScript = scriptRunner(NEUTRON_SCRIPT);

/** Installs the packages once per process (a no-op when present); resolves to the milliseconds it took. */
export const ensureNeutronInstalled = onceInstaller('neutron-standalone.sh', runScript, REQUIRED_BINARIES);

// neutron-server and the agent run in sessions of their own (setsid): a test process that dies without stop()
// signals both at exit; one killed outright leaves them, their database and vhost to the next reaper (stop --drop-db).
const instances = ownedInstances({
  prefix: 'leasehold-neutron-',
  pidFile: 'neutron.pid',
  extraPidFiles: ['agent.pid'],
  label: 'Neutron',
  stop: (dir) => runScript(['stop', dir, '--drop-db'], 90_000),
});

/** Stops Neutrons (and agents) that dead test processes left, dropping their databases and vhosts. */
export function reapStaleNeutrons(): Promise<void> {
  return instances.reap();
}

// ------------------------------------------------------------------------------------------------ Neutron

export interface NeutronTimings {
  /** Time `install` took in this process; 0 when the packages were there already. */
  installMs: number;
  /** `start`: database, schema, vhost, neutron-server until its API and RPC answer. */
  startMs: number;
  /** `start-agent` until ironic-neutron-agent runs; 0 before. */
  agentMs: number;
}

export interface NeutronHandle extends NeutronApi {
  readonly dataDir: string;
  /** Neutron's service user (admin and service on project `service`); the handle's calls carry its token. */
  readonly serviceUser: KeystoneUser;
  readonly timings: NeutronTimings;
  /** Starts ironic-neutron-agent against Ironic at `ironicUrl` (after Ironic is up); one retry. */
  startAgent(ironicUrl: string): Promise<void>;
  /** Polls until the agent has reported node `nodeUuid` alive with the lab's physnet: binding works from then. */
  waitForAgent(nodeUuid: string, timeoutMs?: number): Promise<NeutronAgent>;
  /** Stops neutron-server and the agent, deletes the vhost, drops the database, removes the data dir; idempotent. */
  stop(): Promise<void>;
}

export interface StartNeutronOptions {
  /** The Keystone user Neutron validates tokens as; default `neutron` (created or re-keyed). */
  serviceUser?: string;
  /** Enable the trunk service plugin (default true; see the script's header). */
  trunk?: boolean;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The migrated schema's dump, shared by every test process (not under the instances' prefix: never reaped). */
const SCHEMA_CACHE = join(tmpdir(), 'leasehold-nschema');

/**
 * Creates (or re-keys) Neutron's service user, starts Neutron against `keystone` (one retry on another port and
 * data dir), and registers it in the catalog as the `network` service (public and internal, RegionOne).
 */
export async function startNeutron(keystone: KeystoneApi, options: StartNeutronOptions = {}): Promise<NeutronHandle> {
  const avail = neutronAvailable();
  if (!avail.ok) throw new Error(`cannot start Neutron: ${avail.reason}`);
  const installMs = await ensureNeutronInstalled();
  await reapStaleNeutrons();
  const { user, project } = await keystone.ensureServiceUser(options.serviceUser ?? 'neutron');
  const token = tokenSource(() => keystone.issueToken({ user, project: project.id }));

  let lastError = '';
  for (let attempt = 0; attempt < 2; attempt++) {
    const port = await freePort();
    const dataDir = instances.create();
    const args = ['start', dataDir, '--port', String(port), '--keystone-url', keystone.url, '--keystone-user', user.name];
    args.push('--report-interval', String(LAB.reportIntervalSeconds), '--schema-cache', SCHEMA_CACHE);
    if (options.trunk === false) args.push('--no-trunk');
    instances.started(dataDir);
    const t0 = performance.now();
    // The password goes through the environment: command lines are visible to every process.
    const res = await runScript(args, 240_000, { NEUTRON_KEYSTONE_PASSWORD: user.password });
    const startMs = Math.round(performance.now() - t0);
    const url = res.stdout.trim().split('\n').pop() ?? '';
    if (res.code === 0 && /^http:\/\/127\.0\.0\.1:\d+$/.test(url)) {
      const handle = makeHandle(url, dataDir, user, token, { installMs, startMs, agentMs: 0 });
      try {
        await keystone.setEndpoints('network', 'neutron', { public: url, internal: url });
      } catch (err) {
        await handle.stop();
        throw err;
      }
      return handle;
    }
    lastError = `neutron-standalone.sh start (port ${port}) failed (${res.code}):\n${res.stderr.slice(-6000)}`;
    await runScript(['stop', dataDir, '--drop-db'], 90_000);
    instances.stopped(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }
  throw new Error(lastError);
}

function makeHandle(url: string, dataDir: string, serviceUser: KeystoneUser, token: () => Promise<string>, timings: NeutronTimings): NeutronHandle {
  const api = new NeutronApi(url, token);
  let stopped: Promise<void> | undefined;
  return Object.assign(api, {
    dataDir,
    serviceUser,
    timings,
    async startAgent(ironicUrl: string) {
      let lastError = '';
      for (let attempt = 0; attempt < 2; attempt++) {
        const t0 = performance.now();
        const res = await runScript(['start-agent', dataDir, '--ironic-url', ironicUrl], 120_000);
        timings.agentMs = Math.round(performance.now() - t0);
        if (res.code === 0) return;
        lastError = `neutron-standalone.sh start-agent failed (${res.code}):\n${res.stderr.slice(-6000)}`;
      }
      throw new Error(lastError);
    },
    async waitForAgent(nodeUuid: string, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      let seen: NeutronAgent | undefined;
      for (;;) {
        seen = (await api.listAgents({ host: nodeUuid }))[0];
        if (seen?.alive && seen.configurations.bridge_mappings?.[LAB.physnet]) return seen;
        if (Date.now() > deadline) {
          throw new Error(`ironic-neutron-agent has not reported node ${nodeUuid} on ${LAB.physnet} in ${timeoutMs} ms: ${JSON.stringify(seen ?? null)}`);
        }
        await sleep(250);
      }
    },
    stop() {
      stopped ??= (async () => {
        const keep = Boolean(process.env.LEASEHOLD_KEEP_NEUTRON);
        const res = await runScript(keep ? ['stop', dataDir] : ['stop', dataDir, '--drop-db'], 90_000);
        instances.stopped(dataDir);
        if (res.code !== 0) throw new Error(`neutron-standalone.sh stop failed (${res.code}):\n${res.stderr}`);
        if (!keep) rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  });
}
