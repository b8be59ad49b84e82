import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../src/domain/clock.js';

/**
 * A small Ironic over HTTP for driver, gateway and console tests: the endpoints Leasehold uses, every request
 * recorded (with the time of a given clock when it arrived), scripted failures (e.g. 409 NodeLocked as Ironic
 * words it, `{"error_message": "{\"faultstring\": \"Node ... is locked by host ...\"}"}`).
 */

export const SECRET = 'bmc-password-must-not-leak';
export const LOCKED = (id: string) => `Node ${id} is locked by host conductor-1, please retry after the current operation is completed.`;

export interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
  /** The fake's clock when the request arrived (ms since the epoch). */
  readonly at: number;
}

interface Scripted {
  readonly match: (req: Recorded) => boolean;
  readonly status: number;
  readonly fault?: string;
  /** Never answers (for timeouts and close). */
  readonly hang?: boolean;
  /** How many times (Infinity: always). */
  remaining: number;
}

export type RawNode = Record<string, unknown> & { uuid: string; name: string };

export const uuid = (n: number) => `6f1c7c3e-0000-4000-8000-${String(n).padStart(12, '0')}`;
export function rawNode(n: number, over: Partial<RawNode> = {}): RawNode {
  return {
    uuid: uuid(n),
    name: `node-${n}`,
    resource_class: 'baremetal.gpu',
    owner: 'physics-lab',
    lessee: null,
    properties: { memory_mb: 65536, cpus: 32, cpu_arch: 'x86_64' },
    traits: ['CUSTOM_GPU'],
    extra: {},
    power_state: 'power off',
    target_power_state: null,
    provision_state: 'available',
    target_provision_state: null,
    maintenance: false,
    maintenance_reason: null,
    last_error: null,
    console_enabled: false,
    reservation: null,
    created_at: '2026-11-20T06:00:00+00:00',
    updated_at: '2026-11-21T06:00:00.123456+00:00',
    driver: 'fake-hardware',
    driver_info: { ipmi_address: '192.0.2.1', ipmi_username: 'admin', ipmi_password: SECRET },
    instance_info: {},
    ...over,
  };
}

/** A small Ironic: the endpoints the driver uses, recorded requests, scripted failures. */
export class FakeIronic {
  readonly requests: Recorded[] = [];
  readonly nodes = new Map<string, RawNode>();
  readonly scripted: Scripted[] = [];
  versions = { min: '1.1', max: '1.82' };
  /** Server-side page size (Ironic's max_limit). */
  pageSize = 1000;
  /** Base of the `next` links (Ironic's public_endpoint may differ from the URL the client uses). */
  publicBase: string | null = null;
  /** Ignore `fields` and send driver_info anyway (a misbehaving proxy or an old server). */
  leakDriverInfo = false;
  /** List the versions in `GET /`'s body (else only in the headers). */
  versionsInBody = true;
  console: { console_enabled: boolean; console_info: Record<string, unknown> | null } = { console_enabled: false, console_info: null };
  private readonly server: Server = createServer((req, res) => void this.handle(req, res));
  url = '';

  /** `clock` stamps each request's arrival (`at`); the system clock by default. */
  constructor(private readonly clock: Pick<Clock, 'now'> = { now: () => new Date() }) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  add(...nodes: RawNode[]): void {
    for (const node of nodes) this.nodes.set(node.uuid, node);
  }

  script(match: (req: Recorded) => boolean, status: number, options: { fault?: string; times?: number; hang?: boolean } = {}): void {
    this.scripted.push({ match, status, fault: options.fault, hang: options.hang, remaining: options.times ?? 1 });
  }

  requestsTo(method: string, path: string | RegExp): Recorded[] {
    return this.requests.filter((r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const url = new URL(req.url ?? '/', 'http://fake');
    const rec: Recorded = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: text ? JSON.parse(text) : undefined,
      at: this.clock.now().getTime(),
    };
    this.requests.push(rec);
    const script = this.scripted.find((s) => s.remaining > 0 && s.match(rec));
    if (script) {
      script.remaining--;
      if (script.hang) return;
      return this.error(res, script.status, script.fault ?? 'scripted failure');
    }
    this.route(rec, res);
  }

  private route(req: Recorded, res: ServerResponse): void {
    try {
      this.routeOrThrow(req, res);
    } catch (err) {
      this.error(res, 400, (err as Error).message);
    }
  }

  private routeOrThrow(req: Recorded, res: ServerResponse): void {
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'X-OpenStack-Ironic-API-Minimum-Version': this.versions.min,
        'X-OpenStack-Ironic-API-Maximum-Version': this.versions.max,
      });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (req.method === 'GET' && req.path === '/') {
      return send(200, {
        name: 'OpenStack Ironic API',
        ...(this.versionsInBody
          ? { versions: [{ id: 'v1', status: 'CURRENT', min_version: this.versions.min, version: this.versions.max, links: [] }] }
          : {}),
      });
    }
    if (req.method === 'GET' && req.path === '/v1') {
      return send(200, { id: 'v1', version: { id: 'v1', status: 'CURRENT', min_version: this.versions.min, version: this.versions.max } });
    }
    if (req.method === 'GET' && req.path === '/v1/drivers') return send(200, { drivers: [{ name: 'fake-hardware' }] });
    if (req.method === 'GET' && req.path === '/v1/nodes') {
      const all = [...this.nodes.values()].sort((a, b) => a.uuid.localeCompare(b.uuid));
      const marker = req.query.get('marker');
      const start = marker ? all.findIndex((n) => n.uuid === marker) + 1 : 0;
      const limit = Math.min(Number(req.query.get('limit') ?? this.pageSize), this.pageSize);
      const page = all.slice(start, start + limit);
      const more = start + limit < all.length;
      const base = this.publicBase ?? this.url;
      const next = more ? `${base}/v1/nodes?limit=${limit}&marker=${page.at(-1)?.uuid}` : undefined;
      return send(200, { nodes: page.map((n) => this.view(n, req.query.get('fields'))), ...(next ? { next } : {}) });
    }
    const m = /^\/v1\/nodes\/([^/]+)(\/.*)?$/.exec(req.path);
    const node = m ? (this.nodes.get(decodeURIComponent(m[1] ?? '')) ?? [...this.nodes.values()].find((n) => n.name === decodeURIComponent(m[1] ?? ''))) : undefined;
    if (m && !node) return this.error(res, 404, `Node ${decodeURIComponent(m[1] ?? '')} could not be found.`);
    if (!m || !node) return this.error(res, 404, 'The resource could not be found.');
    const sub = m[2] ?? '';
    if (req.method === 'GET' && sub === '') return send(200, this.view(node, req.query.get('fields')));
    if (req.method === 'PATCH' && sub === '') {
      for (const op of req.body as Array<{ op: string; path: string; value?: unknown }>) {
        const parts = op.path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
        const [field, key] = parts;
        if (field === undefined) continue;
        if (key === undefined) node[field] = op.op === 'remove' ? null : op.value;
        else {
          const bag = node[field] as Record<string, unknown>;
          if (op.op === 'remove' && !(key in bag)) return this.error(res, 400, `can't remove non-existent object '${key}'`);
          if (op.op === 'remove') delete bag[key];
          else bag[key] = op.value;
        }
      }
      return send(200, node); // Ironic answers a PATCH with the whole node, driver_info included
    }
    if (req.method === 'PUT' && (sub === '/states/power' || sub === '/states/provision' || sub === '/states/console')) return send(202);
    if (req.method === 'PUT' && sub === '/management/boot_device') return send(204);
    if (req.method === 'GET' && sub === '/management/boot_device') return send(200, { boot_device: 'pxe', persistent: true });
    if (req.method === 'GET' && sub === '/states/console') return send(200, this.console);
    return this.error(res, 405, 'method not allowed');
  }

  private view(node: RawNode, fields: string | null): Record<string, unknown> {
    if (!fields || this.leakDriverInfo) return structuredClone(node);
    const asked = fields.split(',');
    const invalid = asked.find((f) => !(f in node) || f === 'updated_at' || f === 'created_at');
    if (invalid) throw new Error(`Field ${invalid} is not a valid field.`);
    // Like Ironic's object_to_dict: uuid, created_at and updated_at come whatever `fields` says.
    return Object.fromEntries(['uuid', 'created_at', 'updated_at', ...asked].map((f) => [f, structuredClone(node[f])]));
  }

  private error(res: ServerResponse, status: number, fault: string): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error_message: JSON.stringify({ faultstring: fault, faultcode: status < 500 ? 'Client' : 'Server', debuginfo: null }) }));
  }
}
