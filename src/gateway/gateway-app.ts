import { Hono, type Context } from 'hono';
import { authenticateToken, authenticateWithNode, clientAddress, tokenFromHeaders } from '../access/authenticate.js';
import type { EntryDeps } from '../access/entry-deps.js';
import { nodeActionGuard, type NodeActionRule } from '../access/node-action-guard.js';
import { nodeForCaller, type NodeInView } from '../access/node-access.js';
import { ForbiddenError, NotFoundError, TooManyRequestsError } from '../domain/errors.js';
import type { Principal } from '../domain/identity.js';
import type { NodeRuleName } from '../domain/policy-rules/default-rules.js';
import type { PolicySubject } from '../domain/policy-rules/rule-expression.js';
import { isAdmin, nodeSubject, nodeVisibility } from '../domain/policy.js';
import type { AccessGuard } from '../drivers/hardware-driver.js';
import { VERSION_HEADER } from '../drivers/ironic/microversion.js';
import { LEASE_MARK_KEY } from '../drivers/lessee-mark.js';
import type { IronicForwarder } from '../access/ironic-forwarder.js';
import { isIdOrName } from '../domain/text-bounds.js';
import type { NodeWithLease } from '../store/store.js';
import { ironicError, ironicErrorFor, patchRule, PROVISION_RULE, REDACTED_FIELDS } from './ironic-shapes.js';
import { projectVifCall } from './vif-gateway.js';

/** A node request's node, read with its token (authenticateWithNode), for the ident its path names. */
type NodeRead = { readonly ident: string; readonly found: NodeWithLease | null };
type Env = { Variables: { principal: Principal; node: NodeRead | null } };
type Ctx = Context<Env>;

type Rules = Readonly<Partial<Record<string, NodeRuleName>>>;

/**
 * Sub-resources of a node the gateway serves, with the rule each method needs (Ironic's names). Anything else under
 * a node — vendor passthru, Ironic's own allocations — is refused to projects; docs/gateway.md says why.
 */
const NODE_SUBRESOURCES: ReadonlyArray<readonly [pattern: RegExp, rules: Rules]> = [
  [/^states$/, { GET: 'baremetal:node:get_states' }],
  [/^states\/power$/, { PUT: 'baremetal:node:set_power_state' }],
  [/^states\/provision$/, { PUT: PROVISION_RULE }],
  [/^states\/console$/, { GET: 'baremetal:node:get_console', PUT: 'baremetal:node:set_console_state' }],
  [/^states\/boot_mode$/, { PUT: 'baremetal:node:set_boot_mode' }],
  [/^states\/secure_boot$/, { PUT: 'baremetal:node:set_secure_boot' }],
  [/^states\/raid$/, { PUT: 'baremetal:node:set_raid_state' }],
  [/^management\/boot_device(\/supported)?$/, { GET: 'baremetal:node:get_boot_device', PUT: 'baremetal:node:set_boot_device' }],
  [/^management\/inject_nmi$/, { PUT: 'baremetal:node:inject_nmi' }],
  [/^management\/indicators$/, { GET: 'baremetal:node:get_indicator_state' }],
  [/^management\/indicators\/[^/]+\/[^/]+$/, { GET: 'baremetal:node:get_indicator_state', PUT: 'baremetal:node:set_indicator_state' }],
  [/^traits$/, { GET: 'baremetal:node:traits:list', PUT: 'baremetal:node:traits:set', DELETE: 'baremetal:node:traits:delete' }],
  [/^traits\/[^/]+$/, { PUT: 'baremetal:node:traits:set', DELETE: 'baremetal:node:traits:delete' }],
  [/^vifs$/, { GET: 'baremetal:node:vif:list', POST: 'baremetal:node:vif:attach' }],
  [/^vifs\/[^/]+$/, { DELETE: 'baremetal:node:vif:detach' }],
  [/^validate$/, { GET: 'baremetal:node:validate' }],
  [/^maintenance$/, { PUT: 'baremetal:node:set_maintenance', DELETE: 'baremetal:node:clear_maintenance' }],
  [/^bios(\/[^/]+)?$/, { GET: 'baremetal:node:bios:get' }],
  [/^history(\/[^/]+)?$/, { GET: 'baremetal:node:history:get' }],
  [/^inventory$/, { GET: 'baremetal:node:inventory:get' }],
  [/^(ports|portgroups)(\/detail)?$/, { GET: 'baremetal:node:ports:list' }],
  [/^volume(\/(connectors|targets))?$/, { GET: 'baremetal:node:volume:list' }],
];

// Ironic's request id is passed on so an operator can find a tenant's call in Ironic's logs (and a gateway
// refusal, which never reached Ironic, is told apart by its absence).
const PASSED_HEADERS = [
  VERSION_HEADER,
  'X-OpenStack-Ironic-API-Minimum-Version',
  'X-OpenStack-Ironic-API-Maximum-Version',
  'OpenStack-API-Version',
  'OpenStack-Request-Id',
];

/**
 * The Ironic-compatible endpoint at `/baremetal`: Ironic's node API with Leasehold's tenancy, so lessees and owners
 * use their own tools (`baremetal`, metalsmith) and Ironic itself is never exposed. Each request is authenticated
 * with a Leasehold token (`X-Auth-Token`), checked against the node policy (domain/policy-rules) with the caller's
 * relation to the node decided from the lease table at this instant, then forwarded with Leasehold's own Ironic
 * credentials and the client's microversion; answers keep Ironic's shapes and error format. Third parties get 404
 * and empty lists, never 403, so nothing leaks that a node exists.
 */
export function gatewayApp(deps: EntryDeps, ironic: IronicForwarder | null): Hono<Env> {
  const app = new Hono<Env>();
  app.onError((err, c) => {
    const { status, body } = ironicErrorFor(err);
    return reply(c, status, body);
  });
  app.notFound((c) => {
    const { status, body } = ironicError(404, `The resource could not be found: ${c.req.method} ${c.req.path}`);
    return reply(c, status, body);
  });
  const backend = (): IronicForwarder => {
    if (!ironic) throw new ForbiddenError('the Ironic-compatible endpoint needs LEASEHOLD_DRIVER=ironic');
    return ironic;
  };

  // Version discovery (no token, as in Ironic): Ironic's documents with their links pointing at this gateway.
  for (const path of ['/', '/v1', '/v1/']) {
    app.get(path, async (c) => {
      const res = await backend().forward('GET', path === '/' ? '/' : '/v1', { microversion: c.req.header(VERSION_HEADER) ?? null });
      return passThrough(c, res, backend());
    });
  }

  app.use('/v1/*', async (c, next) => {
    const token = tokenFromHeaders(c.req.header('authorization'), c.req.header('x-auth-token'));
    // A node request's node and current lease are read with its token, in one query after nothing (local identity):
    // one store round trip where the token, node and lease reads in a row were three.
    const ident = nodeIdentOf(c.req.path);
    try {
      // The REST API's check, with its limiter on unknown tokens (api/auth.ts): a client refused there is here.
      if (ident === null) {
        c.set('principal', await authenticateToken(deps, token, clientAddress(c)));
        c.set('node', null);
      } else {
        const { principal, found } = await authenticateWithNode(deps, token, clientAddress(c), ident);
        c.set('principal', principal);
        c.set('node', { ident, found });
      }
    } catch (err) {
      if (!(err instanceof TooManyRequestsError)) throw err;
      const res = reply(c, 429, ironicErrorFor(err).body);
      res.headers.set('Retry-After', String(err.retryAfterSeconds));
      return res;
    }
    await next();
  });

  // Lists: the operator's are Ironic's as is; a project's hold only the nodes it may see at this instant.
  for (const path of ['/v1/nodes', '/v1/nodes/detail']) {
    app.get(path, async (c) => {
      const principal = c.get('principal');
      const ironicPath = `${path}${queryOf(c)}`;
      if (isAdmin(principal)) return passThrough(c, await backend().forward('GET', ironicPath, { microversion: version(c) }), backend());
      return listForProject(c, deps, backend(), principal, path);
    });
  }

  app.get('/v1/nodes/:ident', async (c) => {
    const ident = c.req.param('ident');
    const found = await nodeForCaller(deps, c.get('principal'), ident, readWith(c, ident));
    const rule = ruleOf(deps, ['baremetal:node:get'], () => new NotFoundError('node', ident));
    if (!rule.allows(found.subject)) throw rule.refusal();
    const guard = guardFor(deps, c.get('principal'), ident, found, rule);
    const res = await backend().forward('GET', `/v1/nodes/${found.node.id}${queryOf(c)}`, { microversion: version(c), guard });
    return nodeReply(c, res, backend(), deps, found.subject);
  });

  app.patch('/v1/nodes/:ident', async (c) => {
    const ident = c.req.param('ident');
    const found = await nodeForCaller(deps, c.get('principal'), ident, readWith(c, ident));
    const text = await c.req.text();
    let ops: unknown;
    try {
      ops = JSON.parse(text);
    } catch {
      return reply(c, 400, ironicError(400, 'The request body is not a valid JSON Patch document').body);
    }
    if (!Array.isArray(ops)) return reply(c, 400, ironicError(400, 'A JSON Patch document is a list of operations').body);
    const names: NodeRuleName[] = [];
    for (const op of ops as Array<{ path?: unknown; value?: unknown }>) {
      const path = typeof op?.path === 'string' ? op.path : '';
      if (path.startsWith(`/extra/${LEASE_MARK_KEY}`) && !found.subject.is_admin) {
        throw new ForbiddenError(`extra/${LEASE_MARK_KEY} is written by Leasehold only`);
      }
      const name = patchRule(op ?? {});
      if (!deps.policy.allows(name, found.subject)) throw new ForbiddenError(`Access was denied to the following resource: ${name}`);
      names.push(name);
    }
    const rule = ruleOf(deps, names, () => new ForbiddenError(`Access was denied to the following resource: ${names.join(', ')}`));
    const guard = guardFor(deps, c.get('principal'), ident, found, rule);
    const res = await backend().forward('PATCH', `/v1/nodes/${found.node.id}`, { body: text, microversion: version(c), guard });
    if (res.status < 300) void deps.inventory.refreshNode(found.node.id).catch(() => undefined);
    return nodeReply(c, res, backend(), deps, found.subject);
  });

  app.all('/v1/nodes/:ident/*', async (c) => {
    const ident = c.req.param('ident');
    const sub = subresourceOf(c.req.path);
    const rules = NODE_SUBRESOURCES.find(([pattern]) => pattern.test(sub))?.[1];
    const found = await nodeForCaller(deps, c.get('principal'), ident, readWith(c, ident));
    const name = rules?.[c.req.method];
    // The operator may use all of Ironic's node API through the gateway; projects only what has a rule.
    if (!name && !found.subject.is_admin) {
      throw new ForbiddenError(`${c.req.method} /v1/nodes/{node}/${sub} is not offered to projects through Leasehold's gateway`);
    }
    const rule = ruleOf(deps, name ? [name] : [], () => new ForbiddenError(`Access was denied to the following resource: ${name}`));
    if (!rule.allows(found.subject)) throw rule.refusal();
    const guard = guardFor(deps, c.get('principal'), ident, found, rule);
    const body = ['GET', 'HEAD', 'DELETE'].includes(c.req.method) ? undefined : await c.req.text();
    const vif = /^vifs(\/[^/]+)?$/.test(sub)
      ? await projectVifCall(deps, backend(), c.get('principal'), ident, found, { method: c.req.method, sub, body, microversion: version(c) })
      : null;
    const res = vif ?? (await backend().forward(c.req.method, `/v1/nodes/${found.node.id}/${sub}${queryOf(c)}`, { body, microversion: version(c), guard }));
    if (res.status < 300 && c.req.method !== 'GET') deps.inventory.followNode(found.node.id);
    return passThrough(c, res, backend());
  });

  // Everything else in Ironic's API (ports, chassis, drivers, allocations...) is the operator's, through Ironic.
  app.all('/v1/*', async (c) => {
    if (!isAdmin(c.get('principal'))) throw new ForbiddenError(`${c.req.path} is not offered to projects through Leasehold's gateway`);
    const body = ['GET', 'HEAD', 'DELETE'].includes(c.req.method) ? undefined : await c.req.text();
    const path = c.req.path.slice(c.req.path.indexOf('/v1/'));
    return passThrough(c, await backend().forward(c.req.method, `${path}${queryOf(c)}`, { body, microversion: version(c) }), backend());
  });

  return app;
}

/** The node read with the token, if it was for this very ident (else nodeForCaller reads it itself). */
function readWith(c: Ctx, ident: string): NodeRead | undefined {
  const read = c.get('node');
  return read?.ident === ident ? read : undefined;
}

/**
 * The node a request under `/v1/nodes/{ident}` names, decoded as the routes decode it; null for the lists
 * (`/v1/nodes`, `/v1/nodes/detail`) and for what cannot be an id or name (the route refuses it with a 400).
 */
export function nodeIdentOf(path: string): string | null {
  const raw = /\/v1\/nodes\/([^/]+)/.exec(path)?.[1];
  if (raw === undefined || raw === 'detail') return null;
  try {
    const ident = decodeURIComponent(raw);
    return isIdOrName(ident) ? ident : null;
  } catch {
    return null;
  }
}

/**
 * The part of a node request's path after `/v1/nodes/{ident}/`, as sent (still percent-encoded), without a trailing
 * slash. Taken by position, not by searching for the decoded ident: `/v1/nodes/%67pu-01/x` has the ident `gpu-01`,
 * which the raw path does not contain (searching for it used to name `1/nodes/%67pu-01/x`).
 */
export function subresourceOf(path: string): string {
  const match = /\/v1\/nodes\/[^/]+\/(.*)$/.exec(path);
  return (match?.[1] ?? '').replace(/\/$/, '');
}

/** A node policy decision over one or more rules (all must allow), refused with `refusal`. */
function ruleOf(deps: EntryDeps, names: readonly NodeRuleName[], refusal: () => Error): NodeActionRule {
  return { allows: (subject) => names.every((name) => deps.policy.allows(name, subject)), refusal };
}

/** The guard a project's request carries to Ironic (api/node-action-guard.ts); the operator's needs none. */
function guardFor(deps: EntryDeps, principal: Principal, ident: string, found: NodeInView, rule: NodeActionRule): AccessGuard | undefined {
  return isAdmin(principal) ? undefined : nodeActionGuard(deps, principal, ident, found, rule);
}

async function listForProject(c: Ctx, deps: EntryDeps, ironic: IronicForwarder, principal: Principal, path: string): Promise<Response> {
  const url = new URL(c.req.url);
  const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 1000) || 1000, 1), 1000);
  const marker = url.searchParams.get('marker');
  // The nodes this project may see at this instant (owned, or leased now), then Ironic's answer for the query
  // without paging, kept to those: Ironic's own filters (owner=, lessee=, provision_state=, fields=...) still apply.
  const visible = new Map<string, PolicySubject>();
  const now = deps.clock.now();
  let page = await deps.store.listNodes({}, nodeVisibility(principal, now), { limit: 1000 });
  for (;;) {
    const leases = await deps.store.leasing.currentLeases(page.items.map((n) => n.id), now);
    for (const node of page.items) {
      visible.set(node.id, nodeSubject(principal, node, leases.get(node.id)?.project_id === principal.projectId));
    }
    if (!page.nextMarker) break;
    page = await deps.store.listNodes({}, nodeVisibility(principal, now), { limit: 1000, marker: page.nextMarker });
  }
  const query = new URLSearchParams(url.searchParams);
  query.delete('limit');
  query.delete('marker');
  const all: Array<Record<string, unknown>> = [];
  let next: string | null = `${path}?${withFields(query).toString()}`;
  while (next) {
    const res = await ironic.forward('GET', next, { microversion: version(c) });
    if (res.status >= 300) return passThrough(c, res, ironic);
    const doc = JSON.parse(relink(c, res.text, ironic)) as { nodes?: Array<Record<string, unknown>>; next?: string };
    all.push(...(doc.nodes ?? []));
    next = doc.next ? new URL(doc.next).pathname.replace(/^.*?\/v1\//, '/v1/') + new URL(doc.next).search : null;
  }
  const mine = all.filter((n) => visible.has(String(n.uuid)) && deps.policy.allows('baremetal:node:get', visible.get(String(n.uuid))!));
  const start = marker ? mine.findIndex((n) => n.uuid === marker) + 1 : 0;
  const slice = mine.slice(start, start + limit);
  const fields = url.searchParams.get('fields');
  const nodes = slice.map((n) => strip(redact(n, deps, visible.get(String(n.uuid))!), fields));
  const body: Record<string, unknown> = { nodes };
  if (start + limit < mine.length && slice.length > 0) {
    const q = new URLSearchParams(url.searchParams);
    q.set('limit', String(limit));
    q.set('marker', String(slice[slice.length - 1]!.uuid));
    body.next = `${url.origin}${url.pathname}?${q.toString()}`;
  }
  return reply(c, 200, JSON.stringify(body));
}

/** The uuid is needed to filter by visibility: asked for even when the client's `fields=` leaves it out. */
function withFields(query: URLSearchParams): URLSearchParams {
  const fields = query.get('fields');
  if (fields && !fields.split(',').includes('uuid')) query.set('fields', `${fields},uuid`);
  return query;
}

function strip(node: Record<string, unknown>, fields: string | null): Record<string, unknown> {
  if (!fields || fields.split(',').includes('uuid')) return node;
  const { uuid: _uuid, ...rest } = node;
  return rest;
}

function redact(node: Record<string, unknown>, deps: EntryDeps, subject: PolicySubject): Record<string, unknown> {
  const out = { ...node };
  for (const [field, rule, shown] of REDACTED_FIELDS) {
    if (field in out && !deps.policy.allows(rule, subject)) out[field] = shown;
  }
  return out;
}

/**
 * Ironic's answers with its links (`links`, `next`, discovery documents) pointing at this gateway as the client
 * reached it: Ironic's own address is never shown to tenants.
 */
function relink(c: Ctx, text: string, ironic: IronicForwarder): string {
  const url = new URL(c.req.url);
  const at = url.pathname.indexOf('/v1');
  const base = url.origin + (at >= 0 ? url.pathname.slice(0, at) : url.pathname.replace(/\/$/, ''));
  return text.split(ironic.url.replace(/\/+$/, '')).join(base);
}

/** A node from Ironic, its fields redacted for this caller. */
function nodeReply(c: Ctx, res: Forwarded, ironic: IronicForwarder, deps: EntryDeps, subject: PolicySubject): Response {
  const text = relink(c, res.text, ironic);
  return reply(c, res.status, res.status < 300 ? JSON.stringify(redact(JSON.parse(text), deps, subject)) : text, res.headers);
}

const version = (c: Ctx): string | null => c.req.header(VERSION_HEADER) ?? null;
const queryOf = (c: Ctx): string => new URL(c.req.url).search;
type Forwarded = Awaited<ReturnType<IronicForwarder['forward']>>;
function passThrough(c: Ctx, res: Forwarded, ironic: IronicForwarder): Response {
  return reply(c, res.status, relink(c, res.text, ironic), res.headers);
}

function reply(_c: Ctx, status: number, body: string, from?: Headers): Response {
  // An empty answer (202 to a state change) carries no Content-Type: clients would try to decode it as JSON.
  const empty = status === 204 || body === '';
  const headers = new Headers(empty ? {} : { 'Content-Type': 'application/json' });
  for (const name of PASSED_HEADERS) {
    const value = from?.get(name);
    if (value) headers.set(name, value);
  }
  return new Response(empty ? null : body, { status, headers });
}
