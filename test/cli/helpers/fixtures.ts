/** Contract-shaped API objects (see the v1 contract) for the fake server to answer with. */

export const PROJECT_ID = '7d5e3c1a-2b4f-4e6d-8a9b-0c1d2e3f4a5b';
export const USER_ID = '3a2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d';
export const TOKEN_ID = 'c0ffee00-1234-4567-89ab-cdef01234567';
export const NODE_ID = '0b6a5c3e-1111-4aaa-8aaa-000000000001';
export const NODE_ID_2 = '0b6a5c3e-1111-4aaa-8aaa-000000000002';

export const project = {
  id: PROJECT_ID,
  name: 'physics-lab',
  description: 'Physics department',
  quota: { max_nodes: null, max_lease_duration: 'P5D', max_node_hours: null },
  notice_offsets: null as string[] | null,
  created_at: '2029-12-01T10:00:00.000Z',
  updated_at: '2029-12-02T10:00:00.000Z',
};

export const user = {
  id: USER_ID,
  name: 'alice',
  project_id: PROJECT_ID,
  project_name: 'physics-lab' as string | null,
  role: 'member',
  created_at: '2029-12-03T10:00:00.000Z',
};

export const me = { user, project: { id: PROJECT_ID, name: 'physics-lab' } };
export const adminMe = {
  user: { id: USER_ID, name: 'admin', project_id: null, project_name: null, role: 'admin', created_at: '2029-12-01T00:00:00.000Z' },
  project: null,
};

export const token = {
  id: TOKEN_ID,
  prefix: 'lh_abc123',
  user_id: USER_ID,
  description: 'CI',
  created_at: '2030-01-01T00:00:00.000Z',
  expires_at: null,
  revoked_at: null,
};

export const GIB = 2 ** 30;

export const node = {
  id: NODE_ID,
  name: 'gpu-01',
  resource_class: 'baremetal.gpu',
  owner: PROJECT_ID,
  owner_project: { id: PROJECT_ID, name: 'physics-lab' },
  lessee: null,
  facts: { memory: 65536 * 2 ** 20, disk: 480 * GIB, cpus: 32, gpus: 1, cpu_arch: 'x86_64', resource_class: 'baremetal.gpu', boot_mode: 'uefi' },
  properties: { memory_mb: 65536, local_gb: 480, cpus: 32, gpus: 1, cpu_arch: 'x86_64', capabilities: 'boot_mode:uefi' },
  traits: ['CUSTOM_GPU_A100'],
  power_state: 'power off',
  provision_state: 'available',
  target_provision_state: null,
  maintenance: false,
  maintenance_reason: null,
  last_error: null,
  console_enabled: false,
  synced_at: '2030-01-01T00:00:00.000Z',
  quarantined: false,
  quarantine_reason: null,
  lease: null,
};

export const node2 = {
  ...node,
  id: NODE_ID_2,
  name: 'old-01',
  owner: 'legacy-team',
  owner_project: null,
  resource_class: 'baremetal.compute',
  facts: { memory: 8192 * 2 ** 20, disk: 2000 * GIB, cpus: 4, gpus: 0, cpu_arch: 'aarch64' },
  maintenance: true,
  maintenance_reason: 'bad DIMM',
};

export const NODE_ID_3 = '0b6a5c3e-1111-4aaa-8aaa-000000000003';
export const NODE_ID_4 = '0b6a5c3e-1111-4aaa-8aaa-000000000004';
export const OFFER_ID = 'f0f0f0f0-2222-4bbb-8bbb-000000000001';
export const LEASE_ID = 'a1b2c3d4-3333-4ccc-8ccc-000000000001';
export const OTHER_PROJECT_ID = '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a';

export const offer = {
  id: OFFER_ID,
  node_id: NODE_ID,
  node_name: 'gpu-01',
  project_id: PROJECT_ID,
  project_name: 'physics-lab' as string | null,
  start: '2029-12-31T00:00:00.000Z',
  end: null,
  max_lease_duration: 'P5D',
  min_lease_duration: null,
  allowed_projects: null as string[] | null,
  allowed_project_names: null as (string | null)[] | null,
  status: 'active',
  free_windows: [{ start: '2029-12-31T00:00:00.000Z', end: null }],
  created_at: '2029-12-31T00:00:00.000Z',
  withdrawn_at: null,
  reclaim_notice: null,
  price_per_node_hour: null,
  currency: null,
  extension_window: null,
  extension_max_ahead: null,
  max_total_length: null,
};

const allocation = (node_id: string, node_name: string, group: number) => ({
  node_id,
  node_name,
  group,
  group_number: group + 1,
  state: 'reserved',
  step: null,
  last_error: null,
  start: '2030-01-01T00:00:00.000Z',
  end: '2030-01-04T00:00:00.000Z',
  leave_reason: null,
  replaces: null,
  failure: null,
});

/** The seed lease: 3 GPU nodes (group 0) and 1 big-disk node (group 1) for 3 days from now. */
export const lease = {
  id: LEASE_ID,
  name: 'training',
  project_id: PROJECT_ID,
  project_name: 'physics-lab',
  state: 'pending',
  start: '2030-01-01T00:00:00.000Z',
  end: '2030-01-04T00:00:00.000Z',
  request: {
    groups: [
      { count: 3, where: 'memory >= 48GiB and gpus >= 1' },
      { count: 1, where: 'memory >= 16GiB and disk >= 1TB' },
    ],
  },
  allocations: [
    allocation(NODE_ID, 'gpu-01', 0),
    allocation(NODE_ID_2, 'gpu-02', 0),
    allocation(NODE_ID_3, 'gpu-03', 0),
    allocation(NODE_ID_4, 'disk-01', 1),
  ],
  replace_policy: 'auto',
  auto_renew: null as null | { step: string; until: string; state: string; rule: string | null; message: string | null },
  notices: [
    { offset: 'P1D', at: '2030-01-03T00:00:00.000Z', sent_at: null as string | null },
    { offset: 'PT1H', at: '2030-01-03T23:00:00.000Z', sent_at: null as string | null },
  ],
  created_at: '2030-01-01T00:00:00.000Z',
  updated_at: '2030-01-01T00:00:00.000Z',
};

type Lease = typeof lease;

/** The lease with every allocation (and the lease) in the given states. */
export function leaseIn(state: string, allocationState: string, extra: Partial<Lease> = {}): Lease {
  return { ...lease, state, allocations: lease.allocations.map((a) => ({ ...a, state: allocationState })), ...extra };
}

export const event = {
  seq: 42,
  at: '2030-01-01T00:00:05.000Z',
  type: 'node.power',
  outcome: 'ok',
  actor: 'alice',
  node_id: NODE_ID,
  lease_id: LEASE_ID,
  offer_id: null,
  project_id: PROJECT_ID,
  node_name: 'gpu-01' as string | null,
  project_name: 'physics-lab' as string | null,
  message: 'power on',
  display_message: 'power on',
  details: { target: 'power on' },
};

/** A usage report (GET /v1/usage): two lessees of the owner's nodes, one of them charged in two currencies. */
export const usage = {
  from: '2030-01-01T00:00:00.000Z',
  to: '2030-02-01T00:00:00.000Z',
  as_of: '2030-01-20T00:00:00.000Z',
  group_by: 'project',
  groups: [
    { key: PROJECT_ID, name: 'physics-lab', node_hours: 10, node_seconds: 36_000, allocations: 3, charges: [{ currency: 'EUR', amount: '12.50' }, { currency: 'USD', amount: '3.00' }] },
    { key: OTHER_PROJECT_ID, name: 'chem-lab', node_hours: 1.5, node_seconds: 5_400, allocations: 1, charges: [] },
  ],
  total: { key: null, name: null, node_hours: 11.5, node_seconds: 41_400, allocations: 4, charges: [{ currency: 'EUR', amount: '12.50' }, { currency: 'USD', amount: '3.00' }] },
  days: [],
};
