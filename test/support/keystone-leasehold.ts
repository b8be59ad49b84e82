/**
 * A small OpenStack cloud with Leasehold dropped into it, for the suites under test/keystone: a real Keystone, a
 * real Ironic in auth_strategy = keystone (the catalog's internal `baremetal` endpoint), and the real `leasehold
 * serve` with LEASEHOLD_IDENTITY=keystone and IRONIC_AUTH_TYPE=keystone and no IRONIC_URL (it finds Ironic in the
 * catalog), registered as the catalog's public `baremetal` endpoint (`…/baremetal`). Users are Keystone users in
 * Keystone projects; each gets a clouds.yaml entry, so the real `openstack` CLI and Leasehold's own CLI run with
 * `OS_CLOUD` only, and a Leasehold API caller with a project-scoped Keystone token.
 *
 *   const cloud = await startKeystoneCloud({ nodes: [nodeSpec('gpu-1', …, { owner: 'physics-lab' })] });
 *   const pat = await cloud.user('pat', 'physics-lab', 'member');   // nodes' owner names become project ids
 *   await pat.api.ok('POST', '/v1/offers', { node_id: 'gpu-1' });
 *   const run = await pat.openstack(['baremetal', 'node', 'list', '-f', 'json']);
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from './http.js';
import type { IronicHandle, IronicNodeSpec } from './ironic.js';
import {
  cloudsYaml,
  startIronicWithKeystone,
  startKeystone,
  type ApplicationCredential,
  type CloudConfig,
  type KeystoneHandle,
  type KeystoneProject,
  type KeystoneUser,
} from './keystone.js';
import { startLeaseholdServer, type LeaseholdServer } from './server.js';

export type KeystoneRole = 'reader' | 'member' | 'manager' | 'admin';

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Someone of the cloud: a Keystone user with a password, in one project (or the system), as its tools see it. */
export interface CloudUser {
  readonly user: KeystoneUser;
  readonly project: KeystoneProject | null;
  /** Its clouds.yaml entry. */
  readonly cloud: string;
  /** A project- (or system-) scoped Keystone token, issued once. */
  readonly token: string;
  /** Leasehold's API with that token. */
  readonly api: Api;
  /** OS_CLOUD and OS_CLIENT_CONFIG_FILE (plus a HOME and cache of its own): for `leasehold` and `openstack`. */
  readonly env: Record<string, string>;
  /** `openstack --os-cloud <cloud> …` (Debian's CLI). */
  openstack(args: readonly string[]): Promise<Run>;
}

export interface KeystoneCloud {
  readonly keystone: KeystoneHandle;
  readonly ironic: IronicHandle;
  readonly leasehold: LeaseholdServer;
  /** Ironic uuids by node name. */
  readonly uuid: Readonly<Record<string, string>>;
  /** The Keystone project of that name (created by startKeystoneCloud for the nodes' owners, or by user()). */
  project(name: string): Promise<KeystoneProject>;
  /** A new Keystone user with `role` in `project` (created when missing), or a system-scoped admin (`project` null). */
  user(name: string, project: string | null, role?: KeystoneRole): Promise<CloudUser>;
  /** A clouds.yaml entry for an application credential; its `openstack` and env as a CloudUser's. */
  applicationCredential(name: string, ac: ApplicationCredential): Omit<CloudUser, 'user' | 'project' | 'token' | 'api'>;
  /** The cloud's own admin (admin of project `admin`): Leasehold's operator. */
  readonly admin: CloudUser;
  stop(): Promise<void>;
}

export interface StartKeystoneCloudOptions {
  /** Enrolled in Ironic; each `owner` is a project name, made a Keystone project and stored as its id. */
  readonly nodes: readonly IronicNodeSpec[];
  /** Extra environment for `leasehold serve` (e.g. KEYSTONE_TOKEN_CACHE_TTL). */
  readonly env?: Record<string, string>;
  readonly fakeDelays?: string;
  /**
   * A Keystone and an Ironic already running (the Neutron lab's, test/support/neutron.ts), with how to enrol nodes
   * there; they are the caller's to stop. Default: a Keystone and an Ironic of the cloud's own.
   */
  readonly stack?: {
    readonly keystone: KeystoneHandle;
    readonly ironic: IronicHandle;
    enroll(nodes: readonly IronicNodeSpec[]): Promise<string[]>;
  };
}

/** Debian's CLIs run from /usr/bin/python3, with nothing of this process's OS_* or Python settings. */
export function runTool(bin: string, args: readonly string[], env: Record<string, string>): Promise<Run> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile(bin, [...args], { timeout: 120_000, env: { PATH: '/usr/bin:/bin', ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr, ms: Math.round(performance.now() - t0) });
    });
  });
}

export async function startKeystoneCloud(options: StartKeystoneCloudOptions): Promise<KeystoneCloud> {
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const keystone = options.stack?.keystone ?? (await startKeystone());
    if (!options.stack) stops.push(() => keystone.stop());
    const projects = new Map<string, KeystoneProject>();
    const project = async (name: string) => {
      let p = projects.get(name);
      if (!p) {
        p = name === 'admin' || name === 'service' ? await keystone.findProject(name) : await keystone.createProject(name);
        projects.set(name, p);
      }
      return p;
    };
    const nodes: IronicNodeSpec[] = [];
    for (const node of options.nodes) nodes.push(node.owner ? { ...node, owner: (await project(node.owner)).id } : node);

    const ironic = options.stack?.ironic ?? (await startIronicWithKeystone(keystone, options.fakeDelays ? { fakeDelays: options.fakeDelays } : {}));
    if (!options.stack) stops.push(() => ironic.stop());
    const ids = options.stack ? await options.stack.enroll(nodes) : await ironic.enroll(nodes);
    const uuid = Object.fromEntries(nodes.map((n, i) => [n.name, ids[i]!]));

    const { user: service } = await keystone.ensureServiceUser('leasehold');
    const leasehold = await startLeaseholdServer({
      LEASEHOLD_DRIVER: 'ironic',
      LEASEHOLD_IDENTITY: 'keystone',
      KEYSTONE_URL: keystone.url,
      KEYSTONE_USERNAME: service.name,
      KEYSTONE_PASSWORD: service.password,
      KEYSTONE_PROJECT_NAME: 'service',
      IRONIC_AUTH_TYPE: 'keystone',
      LEASEHOLD_SYNC_INTERVAL: '2s',
      LEASEHOLD_RECONCILE_INTERVAL: '2s',
      LEASEHOLD_LOG_LEVEL: 'info',
      ...options.env,
    });
    stops.push(() => leasehold.stop());
    // The split an operator makes: users' tools find Leasehold as the public baremetal endpoint; Leasehold itself
    // (KEYSTONE_INTERFACE=internal, the default) and Ironic's own services keep the internal one.
    await keystone.setEndpoints('baremetal', 'ironic', { public: `${leasehold.url}/baremetal`, internal: ironic.url });

    const home = mkdtempSync(join(tmpdir(), 'leasehold-cloud-'));
    stops.push(async () => rmSync(home, { recursive: true, force: true }));
    const cloudsFile = join(home, 'clouds.yaml');
    const clouds: Record<string, CloudConfig> = {};
    const addCloud = (name: string, config: CloudConfig) => {
      clouds[name] = config;
      writeFileSync(cloudsFile, cloudsYaml(clouds), { mode: 0o600 });
      const env = { HOME: home, XDG_CACHE_HOME: join(home, `cache-${name}`), OS_CLIENT_CONFIG_FILE: cloudsFile, OS_CLOUD: name };
      return {
        cloud: name,
        env,
        openstack: (args: readonly string[]) => runTool('/usr/bin/openstack', ['--os-cloud', name, ...args], env),
      };
    };

    const user = async (name: string, projectName: string | null, role: KeystoneRole = 'member'): Promise<CloudUser> => {
      const p = projectName === null ? null : await project(projectName);
      const u = await keystone.createUser(name, p ? { project: p.id, roles: [role] } : {});
      if (!p) await keystone.assignSystemRole(u.id, 'admin');
      const { token } = await keystone.issueToken(p ? { user: u, project: p.id } : { user: u, system: true });
      const entry = addCloud(name, keystone.passwordCloud(u, p ? { project: p.id } : { system: true }));
      return { user: u, project: p, token, api: new Api(() => leasehold.url, token, `${name}@${projectName ?? 'system'}`), ...entry };
    };

    const adminProject = await project('admin');
    const adminToken = await keystone.adminToken();
    const adminUser: KeystoneUser = { id: '', name: keystone.admin.username, password: keystone.admin.password };
    const admin: CloudUser = {
      user: adminUser,
      project: adminProject,
      token: adminToken,
      api: new Api(() => leasehold.url, adminToken, 'admin@admin'),
      ...addCloud('cloud-admin', {
        auth_type: 'password',
        auth: { auth_url: keystone.url, username: adminUser.name, password: adminUser.password, user_domain_id: 'default', project_id: adminProject.id },
        region_name: 'RegionOne',
        interface: 'public',
        identity_api_version: 3,
      }),
    };

    return {
      keystone,
      ironic,
      leasehold,
      uuid,
      project,
      user,
      admin,
      applicationCredential: (name, ac) => addCloud(name, keystone.applicationCredentialCloud(ac)),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
