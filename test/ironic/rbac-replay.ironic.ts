/**
 * Conformance: the owner, lessee and third-party node entries of Ironic's project-scoped RBAC matrix, replayed
 * against Leasehold's gateway (`/baremetal`) with a real Ironic behind it. Each entry must get Ironic's decision
 * (allowed / 403 / 404, list lengths, redacted fields), or exactly the deviation rbac-deviations.ts documents
 * with its reason (docs/gateway.md lists them, generated from that table).
 *
 * The fixture is Ironic's own (test_acl.py TestRBACProjectScoped): a node owned by the owner project, a node owned
 * by it and leased to the lessee project, an unowned node and another node. In Leasehold the lessee is the project
 * with an active lease, so the lessee's node is offered by the owner and leased for the whole run. Ironic's
 * project admin maps to Leasehold's project manager (Leasehold's `admin` is the operator, outside any project).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ironicAvailable, startIronic, type IronicHandle } from '../support/ironic.js';
import { until, type Api } from '../support/http.js';
import { nodeSpec, startLeasehold, type LeaseholdOnIronic } from '../support/ironic-leasehold.js';
import { DEVIATIONS, type Outcome } from './rbac-deviations.js';
import { decisionOf, fillPath, loadNodeEntries, MATRIX_PATH, type MatrixEntry, type Persona } from './rbac-matrix.js';
import { existsSync, writeFileSync } from 'node:fs';

const avail = ironicAvailable();
const entries = avail.ok && existsSync(MATRIX_PATH) ? loadNodeEntries() : [];

const OWNER_NODE = '1ab63b9e-66d7-4cd7-8618-dddd0f9f7881';
const LESSEE_NODE = '38d5abed-c585-4fce-a57e-a2ffc2a2ec6f';
const UNOWNED_NODE = '0d4f5b31-7d52-4a4e-9b38-5bcd1f0a4a01';
const OTHER_NODE = '573208e5-cd41-4e26-8f06-ef44022b3793';
const PROJECTS = { owner: 'rbac-owner', lessee: 'rbac-lessee', third: 'rbac-third-party' } as const;

describe.skipIf(!avail.ok)("Ironic's project-scoped RBAC matrix, replayed against the gateway", () => {
  let ironic: IronicHandle;
  let lh: LeaseholdOnIronic;
  const callers = new Map<Persona, Api>();
  const values: Record<string, string> = {
    owner_node_ident: OWNER_NODE,
    lessee_node_ident: LESSEE_NODE,
    allocated_node_ident: LESSEE_NODE,
    node_ident: UNOWNED_NODE,
    trait: 'CUSTOM_MEOW',
    vif_ident: '0e21d58f-5de2-4956-85ff-33935ea1ca01',
    ind_component: 'component',
    ind_ident: 'magic_light',
    owned_history_ident: 'a8b4c4ad-7a6c-4d3b-9d71-2c4c5d0c3b01',
    lessee_history_ident: 'a8b4c4ad-7a6c-4d3b-9d71-2c4c5d0c3b02',
  };
  const outcomes: Outcome[] = [];

  beforeAll(async () => {
    expect(entries.length, `node entries of ${MATRIX_PATH}`).toBeGreaterThan(250);
    ironic = await startIronic();
    const shape = { memory_gib: 64, cpus: 16, local_gb: 480 };
    await ironic.enroll([
      { ...nodeSpec('rbac-owned', shape, { owner: PROJECTS.owner }), uuid: OWNER_NODE },
      { ...nodeSpec('rbac-leased', shape, { owner: PROJECTS.owner, traits: ['CUSTOM_MEOW'] }), uuid: LESSEE_NODE },
      { ...nodeSpec('rbac-unowned', shape), uuid: UNOWNED_NODE },
      { ...nodeSpec('rbac-other', shape, { owner: 'somebody-else' }), uuid: OTHER_NODE },
    ]);
    // The rest of Ironic's fixture: ports (two on the owned node, one on the leased, one elsewhere) and one history
    // event per node (Ironic writes history only on failures: put straight into its database).
    for (const [node, address] of [[OWNER_NODE, '00:00:00:00:00:01'], [OWNER_NODE, '00:00:00:00:00:02'], [LESSEE_NODE, '00:00:00:00:00:03'], [OTHER_NODE, '00:00:00:00:00:ff']]) {
      await ironic.request('POST', '/v1/ports', { node_uuid: node, address });
    }
    ironicDb(
      `for uuid, node in (("${values.owned_history_ident}", "${OWNER_NODE}"), ("${values.lessee_history_ident}", "${LESSEE_NODE}")):
    db.execute("INSERT INTO node_history (uuid, conductor, event_type, severity, event, user, node_id, created_at, version) "
               "SELECT ?, 'localhost', 'provisioning', 'ERROR', 'meow', 'meow', id, datetime('now'), '1.0' FROM nodes WHERE uuid=?", (uuid, node))`,
    );
    lh = await startLeasehold(ironic);
    for (const persona of ['admin', 'manager', 'member', 'reader'] as const) {
      const role = persona === 'admin' ? 'manager' : persona;
      callers.set(`owner-${persona}`, await lh.member(PROJECTS.owner, `owner-${persona}`, role));
      callers.set(`lessee-${persona}`, await lh.member(PROJECTS.lessee, `lessee-${persona}`, role));
    }
    callers.set('third-party-admin', await lh.member(PROJECTS.third, 'third-party-admin', 'manager'));
    await until(async () => (await lh.admin.call('GET', `/v1/nodes/${LESSEE_NODE}`)).status === 200, 15_000, 'the nodes synced');
    await callers.get('owner-manager')!.ok('POST', '/v1/offers', { node_id: LESSEE_NODE, max_lease_duration: '1d' });
    const lease = await callers.get('lessee-member')!.ok('POST', '/v1/leases', { nodes: [LESSEE_NODE], duration: '2h' });
    await until(async () => (await ironic.getNode(LESSEE_NODE)).lessee === lease.project_id, 15_000, 'the lessee set in Ironic');
  });

  afterAll(async () => {
    if (process.env.LEASEHOLD_RBAC_REPORT) writeFileSync(process.env.LEASEHOLD_RBAC_REPORT, JSON.stringify(outcomes, null, 2));
    await lh?.stop();
    await ironic?.stop();
  });

  /** Runs Python against Ironic's SQLite database (`db`, committed after): for fixture values its API cannot write. */
  const ironicDb = (body: string) =>
    execFileSync('/usr/bin/python3', ['-c', `import json, sqlite3\ndb = sqlite3.connect(${JSON.stringify(join(ironic.dataDir, 'ironic.db'))})\n${body}\ndb.commit()`]);

  /** Ironic's fixture values for the entries that read the restricted fields (last_error, reservation...). */
  const setRestrictedFields = (reservation: string | null) =>
    ironicDb(`for uuid in ("${OWNER_NODE}", "${LESSEE_NODE}"):
    db.execute("UPDATE nodes SET last_error=?, reservation=?, driver_info=?, driver_internal_info=? WHERE uuid=?",
               ("meow", ${reservation === null ? 'None' : JSON.stringify(reservation)},
                json.dumps({"foo": "bar", "fake_password": "fakepass"}), json.dumps({"private_state": "secret value"}), uuid))`);

  const send = async (entry: MatrixEntry) => {
    const caller = callers.get(entry.persona)!;
    const res = await fetch(`${lh.url}/baremetal${fillPath(entry.path, values)}`, {
      method: entry.method.toUpperCase(),
      headers: {
        'X-Auth-Token': caller.token,
        'X-OpenStack-Ironic-API-Version': 'latest',
        ...(entry.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: entry.body === undefined ? undefined : JSON.stringify(entry.body),
    });
    const text = await res.text();
    // Ironic's answers carry its request id; the gateway's own decisions do not.
    const fromIronic = res.headers.has('openstack-request-id');
    const decision = fromIronic ? 'allowed' : decisionOf(res.status);
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, decision, body };
  };

  it.each(entries.filter((e) => !e.skipReason).map((e) => [e.name.replaceAll('_', ' '), e] as const))('%s', async (_, entry) => {
    const deviation = DEVIATIONS[entry.name];
    const want = deviation?.leasehold ?? entry.expected;
    if (entry.dictContains) setRestrictedFields('lolcats');
    let got: Awaited<ReturnType<typeof send>>;
    try {
      got = await send(entry);
    } finally {
      if (entry.dictContains) setRestrictedFields(null);
    }
    outcomes.push({ name: entry.name, expected: entry.expected, leasehold: got.decision, status: got.status });
    expect(deviation?.leasehold, `${entry.name}: a documented deviation must differ from Ironic`).not.toBe(entry.expected);
    expect(`${got.decision} (${got.status}): ${JSON.stringify(got.body).slice(0, 300)}`).toMatch(new RegExp(`^${want} `));
    if (got.decision !== 'allowed') {
      expect(got.body?.error_message, "the gateway's refusals keep Ironic's error format").toEqual(expect.any(String));
      return;
    }
    for (const [root, length] of Object.entries(entry.listLength ?? {})) {
      expect(got.body?.[root], `${root} in ${entry.name} (${got.status}: ${JSON.stringify(got.body).slice(0, 300)})`).toHaveLength(length);
    }
    for (const [key, value] of Object.entries(entry.dictContains ?? {})) {
      expect(got.body[key], `${key} in ${entry.name}`).toEqual(value);
    }
  });

  it('replays every owner, lessee and third-party node entry of the matrix, and each documented deviation is one of them', () => {
    const names = new Set(entries.map((e) => e.name));
    expect(Object.keys(DEVIATIONS).filter((name) => !names.has(name))).toEqual([]);
    expect(outcomes.length).toBe(entries.filter((e) => !e.skipReason).length);
  });
});
