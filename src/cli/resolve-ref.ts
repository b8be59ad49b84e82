import { isIdPrefix, isUuid } from '../domain/ids.js';
import type { ApiClient, Query } from './client.js';
import type { CliContext } from './context.js';
import { ApiError } from './errors.js';

/**
 * What the CLI accepts wherever it takes a thing's id: the full id, the thing's name, or the start of its id as the
 * tables print it (`ff102e2b`). Each kind says where its names are looked up: a path the server resolves names on
 * (`GET /v1/nodes/{id or name}`), a `?name=` filter, or nowhere (offers and tokens have no names).
 */
export const RefKind = {
  Lease: 'lease',
  Node: 'node',
  Offer: 'offer',
  Project: 'project',
  User: 'user',
  Token: 'token',
} as const;
export type RefKind = (typeof RefKind)[keyof typeof RefKind];

interface KindSpec {
  readonly path: string;
  /** The list's key in the page (`{"leases": [...]}`). */
  readonly key: string;
  readonly names: 'path' | 'query' | 'none';
  /** Whether a listed item is all a show prints: then a show uses it instead of asking again. */
  readonly listIsFull: boolean;
}

const KINDS: Readonly<Record<RefKind, KindSpec>> = {
  lease: { path: '/v1/leases', key: 'leases', names: 'query', listIsFull: true },
  // A listed node lacks the sub-leasing chain GET /v1/nodes/{id} adds.
  node: { path: '/v1/nodes', key: 'nodes', names: 'path', listIsFull: false },
  offer: { path: '/v1/offers', key: 'offers', names: 'none', listIsFull: true },
  project: { path: '/v1/projects', key: 'projects', names: 'path', listIsFull: true },
  user: { path: '/v1/users', key: 'users', names: 'query', listIsFull: true },
  token: { path: '/v1/tokens', key: 'tokens', names: 'none', listIsFull: true },
};

/** Candidates listed in an `ambiguous` error; more are counted, not listed. */
const MAX_CANDIDATES = 10;

interface Listed {
  readonly id: string;
  readonly name?: string | null;
  /** Tokens have no name: their printed prefix (`lh_ab12`) tells them apart instead. */
  readonly prefix?: string;
}

export interface Resolved<T> {
  readonly id: string;
  /** The thing as the server sent it, when resolving fetched it whole; null when only its id is known. */
  readonly item: T | null;
}

/**
 * The id `ref` stands for, as the caller may see it. A full uuid is used as is (the command's own request says
 * whether it exists); otherwise an exact name first, then a unique id prefix. Nothing found is a `not_found` error
 * naming the kind and what was typed; several are an `ambiguous` error listing them by name and id. Both exit 1,
 * as the server's refusals do, and come out in the API's error shape under --json.
 */
export async function resolveRef<T = unknown>(client: ApiClient, kind: RefKind, ref: string): Promise<Resolved<T>> {
  if (isUuid(ref)) return { id: ref, item: null };
  const spec = KINDS[kind];
  // Nodes and projects: the server takes a name in the path itself, so a ref that cannot be an id prefix goes as
  // it is (no extra request), and the command's own request gets the server's answer (its 404 names the kind and
  // the text). A name a read does not show still works that way (a node offered to the caller, not yet leased).
  if (spec.names === 'path' && !isIdPrefix(ref)) return { id: ref, item: null };
  if (spec.names === 'path') {
    const found = await getOrNull<T & Listed>(client, `${spec.path}/${encodeURIComponent(ref)}`);
    if (found) return { id: found.id, item: found };
  } else if (spec.names === 'query') {
    const named = await list<T & Listed>(client, spec, { name: ref });
    if (named.items.length === 1) return { id: named.items[0]!.id, item: named.items[0]! };
    if (named.items.length > 1) throw ambiguous(kind, ref, 'name', named.items, named.more);
  }
  if (isIdPrefix(ref)) {
    const prefixed = await list<T & Listed>(client, spec, { id_prefix: ref });
    if (prefixed.items.length === 1) {
      const only = prefixed.items[0]!;
      return { id: only.id, item: spec.listIsFull ? only : null };
    }
    if (prefixed.items.length > 1) throw ambiguous(kind, ref, 'id prefix', prefixed.items, prefixed.more);
  }
  if (spec.names === 'path') return { id: ref, item: null };
  const what = spec.names === 'none' ? 'id or id prefix' : 'name, id or id prefix';
  // The shape of the server's own 404 (`lease "x" not found`), so scripts see one kind of not-found.
  throw new ApiError(404, 'not_found', `${kind} ${JSON.stringify(ref)} not found: no ${kind} you can see has that ${what}`, { resource: kind, id: ref });
}

/** The id alone, for commands that only send it on; `undefined` stays `undefined` (an option not given). */
export async function resolveId(ctx: CliContext, kind: RefKind, ref: string): Promise<string>;
export async function resolveId(ctx: CliContext, kind: RefKind, ref: string | undefined): Promise<string | undefined>;
export async function resolveId(ctx: CliContext, kind: RefKind, ref: string | undefined): Promise<string | undefined> {
  if (ref === undefined) return undefined;
  return (await resolveRef(await ctx.client(), kind, ref)).id;
}

/** The thing `ref` names, whole: what resolving fetched, or a GET by its id (which answers 404 for no such thing). */
export async function fetchRef<T>(client: ApiClient, kind: RefKind, ref: string): Promise<T> {
  const resolved = await resolveRef<T>(client, kind, ref);
  return resolved.item ?? (await client.get<T>(`${KINDS[kind].path}/${encodeURIComponent(resolved.id)}`));
}

async function getOrNull<T>(client: ApiClient, path: string): Promise<T | null> {
  try {
    return await client.get<T>(path);
  } catch (err) {
    // A 404 is "no such name"; a 400 is a name the server's path does not take (too long, odd characters).
    if (err instanceof ApiError && (err.status === 404 || err.status === 400)) return null;
    throw err;
  }
}

/** One short page of the kind's list under a filter: enough to tell one from several, and to list a few. */
async function list<T>(client: ApiClient, spec: KindSpec, query: Query): Promise<{ items: T[]; more: boolean }> {
  const page = await client.get<Record<string, unknown>>(spec.path, { ...query, limit: MAX_CANDIDATES });
  const items = (Array.isArray(page[spec.key]) ? page[spec.key] : []) as T[];
  return { items, more: typeof page.next === 'string' && page.next !== '' };
}

function ambiguous(kind: RefKind, ref: string, by: 'name' | 'id prefix', items: readonly Listed[], more: boolean): ApiError {
  const label = (c: Listed) => (c.name ? `${c.name} (${c.id})` : c.prefix ? `${c.id} (${c.prefix}…)` : c.id);
  const listed = items.map(label).join(', ') + (more ? ', and more' : '');
  const hint = by === 'name' ? 'give its id or an id prefix' : 'give more of the id, or the name';
  // One line: the error line ends with the code, and scripts grep it.
  return new ApiError(
    0,
    'ambiguous',
    `${items.length}${more ? '+' : ''} ${kind}s you can see have the ${by} ${JSON.stringify(ref)}: ${listed}; ${hint}`,
    { kind, ref, candidates: items.map((c) => ({ id: c.id, name: c.name ?? null })) },
  );
}
