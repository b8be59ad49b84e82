import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { BackendUnavailableError, InvalidRequestError, InvalidStateError } from '../../domain/errors.js';
import { BootDevice, PowerTarget, ProvisionVerb } from '../hardware-driver.js';
import type { CallOptions, ConsoleInfo, DriverNode, HardwareDriver, NodeMarks, NodeUpdate, ProvisionOptions, VifOptions } from '../hardware-driver.js';
import type { Nic } from '../../domain/networks.js';
import { IronicClient } from './ironic-client.js';
import type { ForwardOptions, IronicClientOptions } from './ironic-client.js';
import { NIC_FIELDS, toNic } from './to-nic.js';
import { NODE_FIELDS, toDriverNode } from './to-driver-node.js';

export type { IronicAuth, IronicClientOptions as IronicDriverOptions, RetryPolicy } from './ironic-client.js';

const PAGE_SIZE = 1000;
/** A guard against a server whose `next` links never end. */
const MAX_PAGES = 10_000;
const FIELDS = NODE_FIELDS.join(',');
/** The filtered node lists that make up listTroubledNodes. */
const TROUBLE_FILTERS: readonly Record<string, string>[] = [{ maintenance: 'true' }, { provision_state: 'error' }, { provision_state: 'clean failed' }];
const VERBS: readonly string[] = Object.values(ProvisionVerb);
const POWER_TARGETS: readonly string[] = Object.values(PowerTarget);
const BOOT_DEVICES: readonly string[] = Object.values(BootDevice);

/**
 * The HardwareDriver port over Ironic's REST API (https://docs.openstack.org/api-ref/baremetal/). Node reads ask
 * only for the fields a DriverNode has (`?fields=`), so BMC credentials are never requested; answers that carry
 * them anyway (PATCH returns the whole node) lose them in the client before anything else sees them.
 */
export class IronicDriver implements HardwareDriver {
  readonly kind = 'ironic' as const;
  private readonly client: IronicClient;

  constructor(options: IronicClientOptions) {
    this.client = new IronicClient(options);
  }

  /** Ironic's URL (without credentials) and, once negotiated, the microversion in use. */
  get url(): string {
    return this.client.baseUrl;
  }

  microversion(): Promise<string> {
    return this.client.microversion();
  }

  /** A tenant's request, after the gateway's policy check, sent with Leasehold's credentials (IronicClient.forward). */
  forward(method: string, pathAndQuery: string, options: ForwardOptions = {}) {
    return this.client.forward(method, pathAndQuery, options);
  }

  async ping(): Promise<void> {
    // Negotiation reads `GET /` (no auth needed); `GET /v1/drivers` proves the credentials work too.
    await this.client.request('GET', '/v1/drivers', { once: true });
  }

  listNodes(): Promise<readonly DriverNode[]> {
    return this.pages('/v1/nodes', 'nodes', { fields: FIELDS }, toDriverNode);
  }

  async listTroubledNodes(): Promise<readonly DriverNode[]> {
    // Ironic filters by one provision state at a time; power failures show as maintenance (fault `power failure`).
    const lists = await Promise.all(TROUBLE_FILTERS.map((filter) => this.pages('/v1/nodes', 'nodes', { fields: FIELDS, ...filter }, toDriverNode)));
    return [...new Map(lists.flat().map((n) => [n.uuid, n])).values()];
  }

  async listNics(nodeId: string): Promise<readonly Nic[]> {
    nodePath(nodeId);
    return this.pages('/v1/ports', 'ports', { node_uuid: nodeId, fields: NIC_FIELDS }, toNic);
  }

  async listVifNics(): Promise<readonly Nic[]> {
    // Ironic cannot filter ports by VIF: one paged read of every port's few fields (≈ 20 pages at 10,000 nodes).
    return (await this.pages('/v1/ports', 'ports', { fields: NIC_FIELDS }, toNic)).filter((nic) => nic.vif !== null);
  }

  async attachVif(nodeId: string, vif: string, options: VifOptions = {}): Promise<void> {
    if (typeof vif !== 'string' || vif.trim() === '') throw new InvalidRequestError('a VIF (Neutron port) id is required');
    const body: Record<string, string> = { id: vif };
    if (options.nicId !== undefined) body.port_uuid = options.nicId; // microversion 1.67 and later
    await this.client.request('POST', `${nodePath(nodeId)}/vifs`, { nodeId, body, guard: options.guard });
  }

  async detachVif(nodeId: string, vif: string, call: CallOptions = {}): Promise<void> {
    try {
      await this.client.request('DELETE', `${nodePath(nodeId)}/vifs/${encodeURIComponent(vif)}`, { nodeId, guard: call.guard });
    } catch (err) {
      // Ironic answers 400 "… VIF … is not attached" for one already gone: the detach is done.
      if (err instanceof InvalidRequestError && /not attached|could not be found|not found/i.test(err.message)) return;
      throw err;
    }
  }

  /** Every item of a paged Ironic list. */
  private async pages<T>(path: string, key: string, query: Record<string, string>, map: (item: unknown) => T): Promise<T[]> {
    const items: T[] = [];
    let marker: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params: Record<string, string> = { ...query, limit: String(PAGE_SIZE) };
      if (marker !== null) params.marker = marker;
      const { body } = await this.client.request('GET', path, { query: params });
      const list = (body as Record<string, unknown> | null)?.[key];
      if (!Array.isArray(list)) throw new BackendUnavailableError(`Ironic answered GET ${path} without a ${key} list`);
      items.push(...list.map(map));
      // Only the marker is taken from `next`: the request stays on the configured URL with our own fields, so
      // neither a public_endpoint pointing elsewhere nor a link without `fields` can leak credentials or secrets.
      const next = nextMarker((body as { next?: unknown }).next);
      if (next === null || list.length === 0 || next === marker) return items;
      marker = next;
    }
    throw new BackendUnavailableError(`Ironic's ${key} list did not end after ${MAX_PAGES} pages`);
  }

  async getNode(id: string): Promise<DriverNode> {
    const { body } = await this.client.request('GET', nodePath(id), { nodeId: id, query: { fields: FIELDS } });
    return toDriverNode(body);
  }

  async updateNode(id: string, update: NodeUpdate, current?: DriverNode | NodeMarks): Promise<DriverNode> {
    for (const field of ['owner', 'lessee'] as const) {
      const value: unknown = update[field];
      if (value !== undefined && value !== null && (typeof value !== 'string' || value.length > 255)) {
        throw new InvalidRequestError(`${field}: expected a string of at most 255 characters or null`);
      }
    }
    for (const [key, value] of Object.entries(update.extra ?? {})) {
      if (value !== null && typeof value !== 'string') throw new InvalidRequestError(`extra.${key}: expected a string or null`);
      if (key === '') throw new InvalidRequestError('extra: keys must not be empty');
    }
    if (current) {
      try {
        return await this.patchNode(id, update, current);
      } catch (err) {
        // A `remove` of what someone else removed since `current` was read: read afresh and build it again.
        if (!(err instanceof InvalidRequestError)) throw err;
      }
    }
    // Ironic refuses to `remove` what is not there: read first, remove only what exists.
    return this.patchNode(id, update, await this.getNode(id));
  }

  private async patchNode(id: string, update: NodeUpdate, current: DriverNode | NodeMarks): Promise<DriverNode> {
    const patch: Array<{ op: 'add' | 'replace' | 'remove'; path: string; value?: unknown }> = [];
    for (const field of ['owner', 'lessee'] as const) {
      const value = update[field];
      if (value === undefined || value === current[field]) continue;
      if (value === null) patch.push({ op: 'remove', path: `/${field}` });
      else patch.push({ op: 'replace', path: `/${field}`, value });
    }
    for (const [key, value] of Object.entries(update.extra ?? {})) {
      const path = `/extra/${pointerEscape(key)}`;
      const exists = Object.hasOwn(current.extra, key);
      if (value === null) {
        if (exists) patch.push({ op: 'remove', path });
      } else if (!exists || current.extra[key] !== value) {
        patch.push({ op: 'add', path, value }); // `add` on an object member sets or replaces it
      }
    }
    // Nothing to change: the node as read, or (given only what a record holds) as Ironic has it.
    if (patch.length === 0) return 'provision_state' in current ? current : this.getNode(id);
    const { body } = await this.client.request('PATCH', nodePath(current.uuid), { nodeId: id, body: patch });
    return toDriverNode(body);
  }

  async setPowerState(id: string, target: PowerTarget, call: CallOptions = {}): Promise<void> {
    if (!POWER_TARGETS.includes(target)) {
      throw new InvalidRequestError(`invalid power target ${JSON.stringify(target)} (expected ${POWER_TARGETS.join(', ')})`);
    }
    await this.client.request('PUT', `${nodePath(id)}/states/power`, { nodeId: id, transition: true, body: { target }, guard: call.guard });
  }

  async setBootDevice(id: string, device: BootDevice, persistent = false, call: CallOptions = {}): Promise<void> {
    if (!BOOT_DEVICES.includes(device)) throw new InvalidRequestError(`Invalid boot device ${device} specified.`);
    await this.client.request('PUT', `${nodePath(id)}/management/boot_device`, {
      nodeId: id,
      transition: true,
      body: { boot_device: device, persistent },
      guard: call.guard,
    });
  }

  async getBootDevice(id: string): Promise<{ readonly boot_device: BootDevice | null; readonly persistent: boolean }> {
    const { body } = await this.client.request('GET', `${nodePath(id)}/management/boot_device`, { nodeId: id, transition: true });
    const answer = body as { boot_device?: unknown; persistent?: unknown } | null;
    const device = answer?.boot_device;
    return {
      boot_device: typeof device === 'string' && BOOT_DEVICES.includes(device) ? (device as BootDevice) : null,
      persistent: answer?.persistent === true,
    };
  }

  async setConsoleEnabled(id: string, enabled: boolean, call: CallOptions = {}): Promise<void> {
    await this.client.request('PUT', `${nodePath(id)}/states/console`, { nodeId: id, transition: true, body: { enabled }, guard: call.guard });
  }

  async getConsole(id: string): Promise<ConsoleInfo> {
    const { body } = await this.client.request('GET', `${nodePath(id)}/states/console`, { nodeId: id, transition: true });
    const answer = body as { console_enabled?: unknown; console_info?: { type?: unknown; url?: unknown } | null } | null;
    const enabled = answer?.console_enabled === true;
    const type = answer?.console_info?.type;
    const url = answer?.console_info?.url;
    return { enabled, info: enabled && typeof type === 'string' && typeof url === 'string' ? { type, url } : null };
  }

  async connectConsole(id: string): Promise<Duplex> {
    const console = await this.getConsole(id);
    if (!console.enabled) throw new InvalidStateError(`The console of node ${id} is not enabled.`, { details: { node: id } });
    if (console.info === null) {
      throw new InvalidStateError(`The console of node ${id} is enabled but Ironic gives no way to reach it (yet)`, { details: { node: id } });
    }
    if (console.info.type !== 'socat') {
      throw new InvalidStateError(
        `The console of node ${id} is of type ${JSON.stringify(console.info.type)}; Leasehold connects to socat consoles only`,
        { details: { node: id, console_type: console.info.type } },
      );
    }
    const target = socatAddress(console.info.url);
    if (!target) throw new InvalidStateError(`The socat console of node ${id} has an address Leasehold cannot read: ${console.info.url}`);
    return await new Promise<Duplex>((resolve, reject) => {
      const socket = connect({ host: target.host, port: target.port });
      socket.setTimeout(10_000, () => socket.destroy(new Error('timed out')));
      socket.once('connect', () => {
        socket.setTimeout(0);
        socket.removeAllListeners('error');
        resolve(socket);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => {
        reject(new BackendUnavailableError(`cannot reach the console of node ${id} at ${console.info?.url}: ${err.code ?? err.message}`));
      });
    });
  }

  async setProvisionState(id: string, verb: ProvisionVerb, options: ProvisionOptions = {}): Promise<void> {
    if (!VERBS.includes(verb)) {
      throw new InvalidRequestError(`invalid provision verb ${JSON.stringify(verb)} (expected ${VERBS.join(', ')})`);
    }
    const body: Record<string, unknown> = { target: verb };
    if (options.cleanSteps !== undefined) body.clean_steps = options.cleanSteps;
    await this.client.request('PUT', `${nodePath(id)}/states/provision`, { nodeId: id, transition: true, body, guard: options.guard });
  }

  async close(): Promise<void> {
    this.client.close();
  }
}

function nodePath(id: string): string {
  if (typeof id !== 'string' || id.trim() === '') throw new InvalidRequestError('a node id is required');
  return `/v1/nodes/${encodeURIComponent(id)}`;
}

/** JSON Pointer (RFC 6901) escaping of one path segment. */
function pointerEscape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function nextMarker(next: unknown): string | null {
  if (typeof next !== 'string' || next === '') return null;
  try {
    return new URL(next, 'http://ironic.invalid/').searchParams.get('marker');
  } catch {
    return null;
  }
}

function socatAddress(url: string): { host: string; port: number } | null {
  try {
    const parsed = new URL(url);
    const port = Number(parsed.port);
    if (parsed.protocol !== 'tcp:' || !parsed.hostname || !Number.isInteger(port) || port <= 0) return null;
    return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return null;
  }
}
