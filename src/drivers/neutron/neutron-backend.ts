import { BackendUnavailableError } from '../../domain/errors.js';
import type { Network, NetworkPort, Subport, Trunk } from '../../domain/networks.js';
import type { NetworkBackend, NewPort, NewTrunk } from '../network-backend.js';
import { NeutronClient, type NeutronClientOptions } from './neutron-client.js';

/** Ids per list request: Neutron takes repeated `id=` filters; 100 keep the URL well under common 8 KiB limits. */
const IDS_PER_REQUEST = 100;

/**
 * The NetworkBackend port over Neutron's v2.0 API with Leasehold's service token (an admin's: it reads every
 * project's networks with their provider attributes and creates a port in a tenant's name). Leasehold decides who
 * may use what; this only reports what Neutron has (networks with their RBAC `access_as_shared` grants, ports with
 * their binding) and carries out port and trunk changes.
 */
export class NeutronBackend implements NetworkBackend {
  readonly kind = 'neutron' as const;
  private readonly client: NeutronClient;
  private trunks: Promise<boolean> | null = null;

  constructor(options: NeutronClientOptions) {
    this.client = new NeutronClient(options);
  }

  get url(): string {
    return this.client.baseUrl;
  }

  async ping(): Promise<void> {
    const body = await this.client.get('/networks', new URLSearchParams({ limit: '1', fields: 'id' }));
    if (body === null) throw new BackendUnavailableError(`Neutron at ${this.client.baseUrl} answered 404 to GET /v2.0/networks: is NEUTRON_URL Neutron's endpoint?`);
  }

  supportsTrunks(): Promise<boolean> {
    this.trunks ??= this.client.get('/extensions/trunk').then(
      (body) => body !== null,
      (err: unknown) => {
        this.trunks = null; // asked again next time
        throw err;
      },
    );
    return this.trunks;
  }

  async listNetworks(projectId: string | null): Promise<readonly Network[]> {
    if (projectId === null) return this.withGrants(await this.networks(new URLSearchParams()));
    const [own, shared, grants] = await Promise.all([
      this.networks(new URLSearchParams({ project_id: projectId })),
      this.networks(new URLSearchParams({ shared: 'true' })),
      this.rbac(new URLSearchParams([['target_tenant', projectId], ['target_tenant', '*']])),
    ]);
    const byId = new Map<string, RawNetwork>([...own, ...shared].map((n) => [n.id, n]));
    const missing = [...new Set(grants.map((g) => g.object_id))].filter((id) => !byId.has(id));
    for (const n of await this.networksById(missing)) byId.set(n.id, n);
    return this.withGrants([...byId.values()]);
  }

  async getNetwork(id: string): Promise<Network | null> {
    const body = (await this.client.get(`/networks/${encodeURIComponent(id)}`)) as { network?: RawNetwork } | null;
    if (!body?.network) return null;
    return (await this.withGrants([body.network]))[0] ?? null;
  }

  async networksNamed(name: string): Promise<readonly Network[]> {
    return this.withGrants(await this.networks(new URLSearchParams({ name })));
  }

  async createPort(spec: NewPort): Promise<NetworkPort> {
    const body = (await this.client.post('/ports', {
      port: { network_id: spec.network_id, project_id: spec.project_id, name: spec.name, description: spec.description ?? '' },
    })) as { port?: RawPort };
    if (!body?.port) throw new BackendUnavailableError('Neutron answered a port creation without the port');
    return toPort(body.port);
  }

  async getPort(id: string): Promise<NetworkPort | null> {
    const body = (await this.client.get(`/ports/${encodeURIComponent(id)}`)) as { port?: RawPort } | null;
    return body?.port ? toPort(body.port) : null;
  }

  async getPorts(ids: readonly string[]): Promise<ReadonlyMap<string, NetworkPort>> {
    const out = new Map<string, NetworkPort>();
    for (const chunk of chunks([...new Set(ids)])) {
      const body = (await this.client.get('/ports', new URLSearchParams(chunk.map((id): [string, string] => ['id', id])))) as { ports?: RawPort[] } | null;
      for (const raw of body?.ports ?? []) out.set(raw.id, toPort(raw));
    }
    return out;
  }

  async portWithMac(networkId: string, mac: string): Promise<NetworkPort | null> {
    const body = (await this.client.get('/ports', new URLSearchParams({ network_id: networkId, mac_address: mac }))) as { ports?: RawPort[] } | null;
    const raw = body?.ports?.[0];
    return raw ? toPort(raw) : null;
  }

  async deletePort(id: string): Promise<void> {
    await this.client.delete(`/ports/${encodeURIComponent(id)}`);
  }

  async createTrunk(spec: NewTrunk): Promise<Trunk> {
    const body = (await this.client.post('/trunks', {
      trunk: { port_id: spec.parent_port_id, project_id: spec.project_id, name: spec.name, sub_ports: spec.subports },
    })) as { trunk?: RawTrunk };
    if (!body?.trunk) throw new BackendUnavailableError('Neutron answered a trunk creation without the trunk');
    return toTrunk(body.trunk);
  }

  async getTrunk(id: string): Promise<Trunk | null> {
    const body = (await this.client.get(`/trunks/${encodeURIComponent(id)}`)) as { trunk?: RawTrunk } | null;
    return body?.trunk ? toTrunk(body.trunk) : null;
  }

  async addSubports(trunkId: string, subports: readonly Subport[]): Promise<Trunk> {
    const body = (await this.client.put(`/trunks/${encodeURIComponent(trunkId)}/add_subports`, { sub_ports: subports })) as RawTrunk | null;
    if (!body) throw new BackendUnavailableError(`Neutron has no trunk ${trunkId}`);
    return toTrunk(body);
  }

  async removeSubports(trunkId: string, portIds: readonly string[]): Promise<Trunk> {
    const trunk = await this.getTrunk(trunkId);
    if (!trunk) throw new BackendUnavailableError(`Neutron has no trunk ${trunkId}`);
    const present = portIds.filter((id) => trunk.subports.some((s) => s.port_id === id));
    if (present.length === 0) return trunk;
    const body = (await this.client.put(`/trunks/${encodeURIComponent(trunkId)}/remove_subports`, {
      sub_ports: present.map((port_id) => ({ port_id })),
    })) as RawTrunk | null;
    return body ? toTrunk(body) : trunk;
  }

  async deleteTrunk(id: string): Promise<void> {
    await this.client.delete(`/trunks/${encodeURIComponent(id)}`);
  }

  async close(): Promise<void> {
    this.client.close();
  }

  private async networks(query: URLSearchParams): Promise<RawNetwork[]> {
    const body = (await this.client.get('/networks', query)) as { networks?: RawNetwork[] } | null;
    return body?.networks ?? [];
  }

  private async networksById(ids: readonly string[]): Promise<RawNetwork[]> {
    const out: RawNetwork[] = [];
    for (const chunk of chunks(ids)) out.push(...(await this.networks(new URLSearchParams(chunk.map((id): [string, string] => ['id', id])))));
    return out;
  }

  private async rbac(query: URLSearchParams): Promise<RawRbac[]> {
    query.set('object_type', 'network');
    query.set('action', 'access_as_shared');
    const body = (await this.client.get('/rbac-policies', query)) as { rbac_policies?: RawRbac[] } | null;
    return body?.rbac_policies ?? [];
  }

  /** Networks with the projects each is shared with (one RBAC read per 100 networks). */
  private async withGrants(raw: readonly RawNetwork[]): Promise<Network[]> {
    const grants = new Map<string, string[]>();
    for (const chunk of chunks(raw.map((n) => n.id))) {
      for (const policy of await this.rbac(new URLSearchParams(chunk.map((id): [string, string] => ['object_id', id])))) {
        const list = grants.get(policy.object_id) ?? [];
        list.push(policy.target_tenant);
        grants.set(policy.object_id, list);
      }
    }
    return raw.map((n) => toNetwork(n, grants.get(n.id) ?? []));
  }
}

interface RawNetwork {
  readonly id: string;
  readonly name?: string;
  readonly project_id?: string;
  readonly tenant_id?: string;
  readonly shared?: boolean;
  readonly status?: string;
  readonly 'provider:network_type'?: string | null;
  readonly 'provider:physical_network'?: string | null;
  readonly 'provider:segmentation_id'?: number | null;
  /** A multi-segment network has these instead of the provider attributes. */
  readonly segments?: ReadonlyArray<Record<string, unknown>>;
}

interface RawPort {
  readonly id: string;
  readonly name?: string;
  readonly network_id: string;
  readonly project_id?: string;
  readonly tenant_id?: string;
  readonly mac_address?: string;
  readonly status?: string;
  readonly 'binding:vif_type'?: string;
  readonly 'binding:host_id'?: string;
  readonly trunk_details?: { readonly trunk_id?: string } | null;
}

interface RawTrunk {
  readonly id: string;
  readonly project_id?: string;
  readonly tenant_id?: string;
  readonly port_id: string;
  readonly sub_ports?: ReadonlyArray<{ port_id: string; segmentation_type: string; segmentation_id: number }>;
}

interface RawRbac {
  readonly object_id: string;
  readonly target_tenant: string;
}

function toNetwork(raw: RawNetwork, sharedWith: readonly string[]): Network {
  const segment = raw.segments?.[0] ?? {
    'provider:network_type': raw['provider:network_type'],
    'provider:physical_network': raw['provider:physical_network'],
    'provider:segmentation_id': raw['provider:segmentation_id'],
  };
  const type = segment['provider:network_type'];
  const physnet = segment['provider:physical_network'];
  const segmentation = segment['provider:segmentation_id'];
  return {
    id: raw.id,
    name: raw.name ?? '',
    project_id: raw.project_id ?? raw.tenant_id ?? '',
    shared: raw.shared === true,
    shared_with: sharedWith,
    network_type: typeof type === 'string' ? type : null,
    physical_network: typeof physnet === 'string' ? physnet : null,
    segmentation_id: typeof segmentation === 'number' ? segmentation : null,
    status: raw.status ?? 'UNKNOWN',
  };
}

function toPort(raw: RawPort): NetworkPort {
  return {
    id: raw.id,
    name: raw.name ?? '',
    network_id: raw.network_id,
    project_id: raw.project_id ?? raw.tenant_id ?? '',
    mac: raw.mac_address ? raw.mac_address.toLowerCase() : null,
    status: raw.status ?? 'UNKNOWN',
    vif_type: raw['binding:vif_type'] ?? null,
    host_id: raw['binding:host_id'] || null,
    trunk_id: raw.trunk_details?.trunk_id ?? null,
  };
}

function toTrunk(raw: RawTrunk): Trunk {
  return {
    id: raw.id,
    project_id: raw.project_id ?? raw.tenant_id ?? '',
    parent_port_id: raw.port_id,
    subports: (raw.sub_ports ?? []).map((s) => ({ port_id: s.port_id, segmentation_type: 'vlan' as const, segmentation_id: s.segmentation_id })),
  };
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += IDS_PER_REQUEST) out.push(items.slice(i, i + IDS_PER_REQUEST));
  return out;
}
