/**
 * Neutron's v2.0 REST API as the end-to-end tests need it, from Node: networks (a project's VLAN network, a shared
 * flat provider network), subnets, RBAC sharing, ports, trunks, agents. Works against any Neutron;
 * test/support/neutron.ts starts one. Every call is one HTTP request; by default with the token `token()` gives
 * (the fixture's: Neutron's service user, admin on project `service`), or `{ token }` to act as a project's user.
 */

export interface NeutronRequestOptions {
  /** X-Auth-Token; default the handle's; null sends none. */
  readonly token?: string | null;
  /** Statuses to return instead of throwing (default: any 2xx is fine, anything else throws). */
  readonly expect?: readonly number[];
}

export interface NeutronReply<T = any> {
  readonly status: number;
  readonly body: T;
}

/** Neutron's error body: `{"NeutronError": {"type": "PortNotFound", "message": "…", "detail": ""}}`. */
export interface NeutronError {
  readonly NeutronError: { readonly type: string; readonly message: string; readonly detail: string };
}

export interface NeutronNetwork {
  readonly id: string;
  readonly name: string;
  readonly project_id: string;
  readonly shared: boolean;
  readonly status: string;
  readonly subnets: string[];
  /** Provider attributes: shown to admins only (a project member sees none of the three). */
  readonly 'provider:network_type'?: string;
  readonly 'provider:physical_network'?: string | null;
  readonly 'provider:segmentation_id'?: number | null;
  readonly [key: string]: unknown;
}

export interface NeutronSubnet {
  readonly id: string;
  readonly network_id: string;
  readonly cidr: string;
  readonly project_id: string;
  readonly [key: string]: unknown;
}

export interface NeutronPort {
  readonly id: string;
  readonly name: string;
  readonly network_id: string;
  readonly project_id: string;
  readonly mac_address: string;
  /** DOWN until bound and provisioned, then ACTIVE. */
  readonly status: string;
  readonly device_id: string;
  readonly device_owner: string;
  readonly fixed_ips: Array<{ subnet_id: string; ip_address: string }>;
  /** `unbound`, `binding_failed`, or the bound driver's (`other` for ML2 baremetal). */
  readonly 'binding:vif_type'?: string;
  /** The Ironic node's uuid once Ironic binds it. */
  readonly 'binding:host_id'?: string;
  readonly 'binding:vnic_type'?: string;
  readonly 'binding:profile'?: Record<string, unknown>;
  readonly trunk_details?: { trunk_id: string; sub_ports: Array<{ port_id: string; segmentation_id: number; mac_address: string }> };
  readonly [key: string]: unknown;
}

export interface TrunkSubport {
  readonly port_id: string;
  readonly segmentation_type: 'vlan' | 'inherit';
  readonly segmentation_id?: number;
}

export interface NeutronTrunk {
  readonly id: string;
  readonly name: string;
  readonly port_id: string;
  readonly project_id: string;
  readonly status: string;
  readonly sub_ports: TrunkSubport[];
  readonly [key: string]: unknown;
}

export interface NeutronAgent {
  readonly id: string;
  readonly agent_type: string;
  readonly binary: string;
  readonly host: string;
  readonly alive: boolean;
  readonly configurations: { bridge_mappings?: Record<string, string>; [key: string]: unknown };
  readonly [key: string]: unknown;
}

/** Who owns what a call creates: the caller's project (a user's token), or `projectId` set by an admin. */
export interface AsWhom {
  readonly token?: string;
  readonly projectId?: string;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function neutronErrorText(body: unknown): string {
  const err = (body as Partial<NeutronError> | null)?.NeutronError;
  if (err) return `${err.type}: ${err.message}`;
  return typeof body === 'string' ? body.slice(0, 300) : JSON.stringify(body).slice(0, 300);
}

export class NeutronApi {
  /** `url`: Neutron's root, e.g. http://127.0.0.1:9696 (the API is under /v2.0). */
  constructor(
    readonly url: string,
    readonly token: () => Promise<string>,
  ) {}

  async request<T = any>(method: string, path: string, body?: unknown, opts: NeutronRequestOptions = {}): Promise<NeutronReply<T>> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const token = opts.token === undefined ? await this.token() : opts.token;
    if (token !== null) headers['X-Auth-Token'] = token;
    const res = await fetch(`${this.url}/v2.0${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    if (opts.expect ? !opts.expect.includes(res.status) : res.status < 200 || res.status >= 300) {
      throw new Error(`Neutron ${method} ${path} → ${res.status}: ${neutronErrorText(parsed)}`);
    }
    return { status: res.status, body: parsed as T };
  }

  // -------------------------------------------------------------------------------------------- networks

  /**
   * A network. Without `provider` a project network: VLAN on the configured physnet with a segmentation id from
   * its range (Neutron picks). `provider` (admin only) makes a provider network, e.g. `{ network_type: 'flat',
   * physical_network: 'provnet' }`.
   */
  async createNetwork(
    name: string,
    opts: AsWhom & {
      shared?: boolean;
      provider?: { network_type: 'flat' | 'vlan'; physical_network?: string; segmentation_id?: number };
      portSecurity?: boolean;
    } = {},
  ): Promise<NeutronNetwork> {
    const network: Record<string, unknown> = { name, admin_state_up: true };
    if (opts.projectId) network.project_id = opts.projectId;
    if (opts.shared !== undefined) network.shared = opts.shared;
    if (opts.portSecurity !== undefined) network.port_security_enabled = opts.portSecurity;
    if (opts.provider) {
      network['provider:network_type'] = opts.provider.network_type;
      if (opts.provider.physical_network) network['provider:physical_network'] = opts.provider.physical_network;
      if (opts.provider.segmentation_id !== undefined) network['provider:segmentation_id'] = opts.provider.segmentation_id;
    }
    const res = await this.request<{ network: NeutronNetwork }>('POST', '/networks', { network }, tokenOf(opts));
    return res.body.network;
  }

  /**
   * A project's VLAN network with one subnet, as that project's user (`token`) or as the handle's admin for
   * `projectId`; the network as the handle's token sees it (with the provider attributes: the VLAN id).
   */
  async createVlanNetwork(name: string, cidr: string, opts: AsWhom = {}): Promise<{ network: NeutronNetwork; subnet: NeutronSubnet }> {
    const created = await this.createNetwork(name, opts);
    const subnet = await this.createSubnet(created.id, cidr, { ...opts, name: `${name}-subnet` });
    return { network: await this.getNetwork(created.id), subnet };
  }

  async getNetwork(id: string, opts: NeutronRequestOptions = {}): Promise<NeutronNetwork> {
    return (await this.request<{ network: NeutronNetwork }>('GET', `/networks/${id}`, undefined, opts)).body.network;
  }

  async listNetworks(query: Record<string, string> = {}, opts: NeutronRequestOptions = {}): Promise<NeutronNetwork[]> {
    return (await this.request<{ networks: NeutronNetwork[] }>('GET', `/networks${qs(query)}`, undefined, opts)).body.networks;
  }

  /** A subnet (IPv4, `cidr`); DHCP off by default (no DHCP agent runs in the lab). */
  async createSubnet(
    networkId: string,
    cidr: string,
    opts: AsWhom & { name?: string; gatewayIp?: string | null; enableDhcp?: boolean } = {},
  ): Promise<NeutronSubnet> {
    const subnet: Record<string, unknown> = { network_id: networkId, cidr, ip_version: 4, enable_dhcp: opts.enableDhcp ?? false };
    if (opts.name) subnet.name = opts.name;
    if (opts.projectId) subnet.project_id = opts.projectId;
    if (opts.gatewayIp !== undefined) subnet.gateway_ip = opts.gatewayIp;
    return (await this.request<{ subnet: NeutronSubnet }>('POST', '/subnets', { subnet }, tokenOf(opts))).body.subnet;
  }

  /**
   * Shares a network with one project (an RBAC policy `access_as_shared`), or with every project (`'*'`). The
   * network's owner (its token) or an admin may do it. Resolves to the policy's id (DELETE /rbac-policies/{id}
   * unshares).
   */
  async shareNetwork(networkId: string, targetProjectId: string, opts: NeutronRequestOptions = {}): Promise<string> {
    const res = await this.request<{ rbac_policy: { id: string } }>(
      'POST',
      '/rbac-policies',
      { rbac_policy: { object_type: 'network', object_id: networkId, action: 'access_as_shared', target_tenant: targetProjectId } },
      opts,
    );
    return res.body.rbac_policy.id;
  }

  // -------------------------------------------------------------------------------------------- ports

  /** A port on `networkId` (an address from its subnet if it has one); `vnicType` `baremetal` is what Ironic binds. */
  async createPort(
    networkId: string,
    opts: AsWhom & { name?: string; macAddress?: string; vnicType?: string; fixedIps?: Array<{ subnet_id: string; ip_address?: string }> } = {},
  ): Promise<NeutronPort> {
    const port: Record<string, unknown> = { network_id: networkId };
    if (opts.name) port.name = opts.name;
    if (opts.projectId) port.project_id = opts.projectId;
    if (opts.macAddress) port.mac_address = opts.macAddress;
    if (opts.vnicType) port['binding:vnic_type'] = opts.vnicType;
    if (opts.fixedIps) port.fixed_ips = opts.fixedIps;
    return (await this.request<{ port: NeutronPort }>('POST', '/ports', { port }, tokenOf(opts))).body.port;
  }

  async getPort(id: string, opts: NeutronRequestOptions = {}): Promise<NeutronPort> {
    return (await this.request<{ port: NeutronPort }>('GET', `/ports/${id}`, undefined, opts)).body.port;
  }

  /** GET /ports with filters, e.g. `{ network_id }`, `{ device_id: nodeUuid }`. */
  async listPorts(query: Record<string, string> = {}, opts: NeutronRequestOptions = {}): Promise<NeutronPort[]> {
    return (await this.request<{ ports: NeutronPort[] }>('GET', `/ports${qs(query)}`, undefined, opts)).body.ports;
  }

  async deletePort(id: string, opts: NeutronRequestOptions = {}): Promise<void> {
    await this.request('DELETE', `/ports/${id}`, undefined, opts);
  }

  /** Polls a port until `done(port)`; throws with the port's last state after `timeoutMs`. */
  async waitForPort(id: string, done: (p: NeutronPort) => boolean, what: string, timeoutMs = 30_000): Promise<NeutronPort> {
    const deadline = Date.now() + timeoutMs;
    for (let delay = 50; ; delay = Math.min(delay * 1.5, 500)) {
      const port = await this.getPort(id);
      if (done(port)) return port;
      if (Date.now() > deadline) {
        throw new Error(
          `port ${id} not ${what} after ${timeoutMs} ms: status ${port.status}, vif_type ${port['binding:vif_type']},` +
            ` host ${port['binding:host_id']}, device ${port.device_owner} ${port.device_id}`,
        );
      }
      await sleep(delay);
    }
  }

  // -------------------------------------------------------------------------------------------- trunks

  /** A trunk on parent port `portId` with `subPorts` (each a port of another network, tagged with its VLAN id). */
  async createTrunk(portId: string, subPorts: readonly TrunkSubport[], opts: AsWhom & { name?: string } = {}): Promise<NeutronTrunk> {
    const trunk: Record<string, unknown> = { port_id: portId, sub_ports: subPorts };
    if (opts.name) trunk.name = opts.name;
    if (opts.projectId) trunk.project_id = opts.projectId;
    return (await this.request<{ trunk: NeutronTrunk }>('POST', '/trunks', { trunk }, tokenOf(opts))).body.trunk;
  }

  async getTrunk(id: string, opts: NeutronRequestOptions = {}): Promise<NeutronTrunk> {
    return (await this.request<{ trunk: NeutronTrunk }>('GET', `/trunks/${id}`, undefined, opts)).body.trunk;
  }

  // -------------------------------------------------------------------------------------------- agents

  /** GET /agents (admin), e.g. `{ host: nodeUuid }`: ironic-neutron-agent reports one `Baremetal Node` per node. */
  async listAgents(query: Record<string, string> = {}): Promise<NeutronAgent[]> {
    return (await this.request<{ agents: NeutronAgent[] }>('GET', `/agents${qs(query)}`)).body.agents;
  }
}

function tokenOf(opts: AsWhom): NeutronRequestOptions {
  return opts.token ? { token: opts.token } : {};
}

function qs(query: Record<string, string>): string {
  const s = new URLSearchParams(query).toString();
  return s ? `?${s}` : '';
}
