import { authenticateMany, type TokenAsk } from './queries/authenticate-many.js';
import { KyselySimulatedHardwareStore } from './kysely-simulated-hardware-store.js';
import type { SimulatedHardwareStore } from '../domain/simulated-hardware-store.js';
import { sql, type Kysely } from 'kysely';
import { ConflictError, InvalidRequestError, NotFoundError } from '../domain/errors.js';
import type { ApiToken, Principal, Project, User } from '../domain/identity.js';
import { idPrefixPattern, isUuid } from '../domain/ids.js';
import type { InventoryNode, NodeFacts, NodeView } from '../domain/inventory.js';
import type { Database } from './database.js';
import type { NetworkStore } from './network-store.js';
import type { ConsoleStore } from './console-store.js';
import { guarded } from './db-errors.js';
import type { EngineStore } from './engine-store.js';
import { keysetPage } from './keyset-page.js';
import { KyselyConsoleStore } from './kysely-console-store.js';
import { KyselyNetworkStore } from './kysely-network-store.js';
import { KyselyLifecycleStore } from './kysely-lifecycle-store.js';
import { KyselyNoticeStore } from './kysely-notice-store.js';
import type { NoticeStore } from './notice-store.js';
import type { LifecycleStore } from './lifecycle-store.js';
import { KyselyUsageStore } from './kysely-usage-store.js';
import type { UsageStore } from './usage-store.js';
import { KyselySubleaseStore } from './kysely-sublease-store.js';
import type { SubleaseStore } from './sublease-store.js';
import { KyselyEngineStore } from './kysely-engine-store.js';
import { KyselyLeasingStore } from './kysely-leasing-store.js';
import type { LeasingStore } from './leasing-store.js';
import { KyselyWebhookOutbox } from './kysely-webhook-outbox.js';
import type { WebhookOutbox } from './webhook-outbox.js';
import { bootstrapAdmin } from './queries/bootstrap-admin.js';
import { NODE_SORT_KEY, nodeViewQuery } from './queries/node-view-query.js';
import { nodeWithLease, nodeWithLeaseUntil } from './queries/node-with-lease.js';
import { tokenWithNode } from './queries/token-with-node.js';
import { ReadCache } from './read-cache.js';
import { nodeVersionsPage, versionedNodes } from './queries/node-versions.js';
import { leaseInForceChanges, leasesInForce } from './queries/leases-in-force.js';
import { planningChanges } from './queries/planning-changes.js';
import { syncNodes } from './queries/sync-nodes.js';
import { upsertNodes } from './queries/upsert-nodes.js';
import { ensureProject } from './queries/ensure-project.js';
import { inList } from './queries/ranges.js';
import { toInventoryNode, toNodeView, toProject, toToken, toUser } from './row-mappers.js';
import type {
  NewProject,
  NewToken,
  NewUser,
  NodeFilter,
  UserFilter,
  LeaseInForce,
  LeaseInForceChanges,
  NodeVersion,
  NodeRecord,
  NodeVisibility,
  NodeWithLease,
  PlanningChanges,
  ProjectPatch,
  Store,
  SyncResult,
  VersionedNode,
} from './store.js';
import type { Page, PageRequest } from './page.js';
import { allocationStateCounts } from './queries/allocation-state-counts.js';
import { leaseStateCounts } from './queries/lease-state-counts.js';
import { nodeStateCounts } from './queries/node-state-counts.js';
import type { PoolStats, StatsStore } from './stats-store.js';

/**
 * The Store on Kysely, for PGlite and PostgreSQL alike (same SQL, same migrations). Every method translates
 * database errors into the domain's (db-errors.ts). Ids of Leasehold's own rows are UUIDs: a non-UUID id is
 * answered as "not found" before it reaches PostgreSQL, which would otherwise fail the cast.
 */
export class KyselyStore implements Store {
  private closing: Promise<void> | null = null;
  readonly leasing: LeasingStore;
  readonly tasks: EngineStore;
  readonly webhooks: WebhookOutbox;
  readonly consoles: ConsoleStore;
  readonly networks: NetworkStore;
  readonly lifecycle: LifecycleStore;
  readonly stats: StatsStore;
  readonly usage: UsageStore;
  readonly notices: NoticeStore;
  readonly subleases: SubleaseStore;
  readonly simulatedHardware: SimulatedHardwareStore;
  /** The embedded store's kept reads (read-cache.ts): a gateway request's token and node, a node with its lease. */
  private readonly gatewayReads: ReadCache<{ readonly principal: Principal; readonly found: NodeWithLease | null }> | null;
  private readonly nodeReads: ReadCache<NodeWithLease> | null;

  constructor(
    private readonly db: Kysely<Database>,
    readonly engine: 'pglite' | 'postgres',
    /** The connection pool's counters (open-store.ts knows the pool or PGlite's session); none: all zeros. */
    pool: () => PoolStats = () => ({ max: 0, in_use: 0, idle: 0, waiting: 0 }),
    /**
     * The embedded store's count of statements that may have written (pglite-dialect.ts): the gateway's node reads
     * are then kept while it stands still, and read again after a write while the session is free (read-cache.ts).
     * None (PostgreSQL, where other replicas write): every read goes to the database.
     */
    writes?: { writeCount(): number; onWrite(listener: () => void): void },
  ) {
    if (writes) {
      const options = {
        refresh: {
          idle: () => {
            const session = pool();
            return session.in_use === 0 && session.waiting === 0;
          },
        },
      };
      const gatewayReads = new ReadCache<{ readonly principal: Principal; readonly found: NodeWithLease | null }>(() => writes.writeCount(), options);
      const nodeReads = new ReadCache<NodeWithLease>(() => writes.writeCount(), options);
      writes.onWrite(() => {
        gatewayReads.written();
        nodeReads.written();
      });
      this.gatewayReads = gatewayReads;
      this.nodeReads = nodeReads;
    } else {
      this.gatewayReads = null;
      this.nodeReads = null;
    }
    this.leasing = new KyselyLeasingStore(db, engine === 'pglite');
    this.tasks = new KyselyEngineStore(db);
    this.webhooks = new KyselyWebhookOutbox(db);
    this.consoles = new KyselyConsoleStore(db);
    this.networks = new KyselyNetworkStore(db);
    this.lifecycle = new KyselyLifecycleStore(db);
    this.stats = {
      leasesByState: () => guarded(() => leaseStateCounts(db)),
      allocationsByState: () => guarded(() => allocationStateCounts(db)),
      nodesByState: () => guarded(() => nodeStateCounts(db)),
      pool,
    };
    this.usage = new KyselyUsageStore(db);
    this.notices = new KyselyNoticeStore(db);
    this.subleases = new KyselySubleaseStore(db);
    this.simulatedHardware = new KyselySimulatedHardwareStore(db);
  }

  ping(): Promise<void> {
    return guarded(async () => {
      await sql`select 1`.execute(this.db);
    });
  }

  /** Idempotent: a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.db.destroy();
    return this.closing;
  }

  createProject(input: NewProject, now: Date): Promise<Project> {
    return guarded(async () => {
      const row = await this.db
        .insertInto('projects')
        .values({
          name: input.name,
          description: input.description ?? '',
          quota: JSON.stringify(input.quota ?? {}),
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toProject(row);
    });
  }

  ensureProject(id: string, name: string, now: Date): Promise<{ readonly id: string; readonly name: string }> {
    return guarded(() => ensureProject(this.db, id, name, now));
  }

  findProject(idOrName: string): Promise<Project | null> {
    return guarded(async () => {
      // By id first: a project named like another project's id must not shadow that project. Ids are uuids for
      // local projects and Keystone's ids (any text) for Keystone's.
      const byId = await this.db.selectFrom('projects').selectAll().where('id', '=', idOrName).executeTakeFirst();
      if (byId) return toProject(byId);
      const byName = await this.db.selectFrom('projects').selectAll().where('name', '=', idOrName).executeTakeFirst();
      return byName ? toProject(byName) : null;
    });
  }

  listProjects(filter: { readonly ids?: readonly string[]; readonly id_prefix?: string }, page: PageRequest): Promise<Page<Project>> {
    return guarded(async () => {
      let query = this.db.selectFrom('projects').selectAll();
      if (filter.id_prefix !== undefined) query = query.where(sql<boolean>`id::text like ${idPrefixPattern(filter.id_prefix)}`);
      if (filter.ids !== undefined) {
        const ids = filter.ids;
        // `in ()` is not SQL; an empty allow-list matches nothing.
        query = ids.length > 0 ? query.where('id', 'in', ids) : query.where(sql<boolean>`false`);
      }
      const result = await keysetPage(query, { id: sql`id`, sortKey: [sql`name`, sql`id`], idOf: (row) => row.id }, page);
      return { items: result.items.map(toProject), nextMarker: result.nextMarker };
    });
  }

  updateProject(id: string, patch: ProjectPatch, now: Date): Promise<Project> {
    return guarded(async () => {
      const row = await this.db
        .updateTable('projects')
        .set({
          updated_at: now,
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.description !== undefined && { description: patch.description }),
          ...(patch.quota !== undefined && { quota: JSON.stringify(patch.quota) }),
          ...(patch.notice_offsets_ms !== undefined && { notice_offsets_ms: patch.notice_offsets_ms === null ? null : JSON.stringify(patch.notice_offsets_ms) }),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new NotFoundError('project', id);
      return toProject(row);
    });
  }

  deleteProject(id: string): Promise<void> {
    return guarded(() =>
      this.db.transaction().execute(async (trx) => {
        // The row lock makes users, leases and offers created meanwhile wait, then fail their reference check.
        const project = await trx.selectFrom('projects').select(['id', 'name']).where('id', '=', id).forUpdate().executeTakeFirst();
        if (!project) throw new NotFoundError('project', id);
        const count = (table: 'users' | 'leases' | 'offers') =>
          trx.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).where('project_id', '=', id).executeTakeFirstOrThrow();
        // One after another: a transaction is one connection.
        const users = await count('users');
        const leases = await count('leases');
        const offers = await count('offers');
        const nodes = await trx
          .selectFrom('nodes')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('removed_at', 'is', null)
          .where('owner', 'in', [project.id, project.name])
          .executeTakeFirstOrThrow();
        const counts = { users: Number(users.n), leases: Number(leases.n), offers: Number(offers.n), nodes: Number(nodes.n) };
        if (counts.users + counts.leases + counts.offers + counts.nodes > 0) {
          throw new ConflictError(projectInUseMessage(project.name, counts), { details: { project_id: project.id, ...counts } });
        }
        await trx.deleteFrom('projects').where('id', '=', id).execute();
      }),
    );
  }

  createUser(input: NewUser, now: Date): Promise<User> {
    return guarded(async () => {
      if (input.project_id === null && input.role !== 'admin') {
        throw new InvalidRequestError(`a ${input.role} must belong to a project`, { details: { field: 'project_id' } });
      }
      const row = await this.db
        .insertInto('users')
        .values({ name: input.name, project_id: input.project_id, role: input.role, created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toUser(row);
    });
  }

  getUser(id: string): Promise<User | null> {
    return guarded(async () => {
      if (!isUuid(id)) return null;
      const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toUser(row) : null;
    });
  }

  listUsers(filter: UserFilter, page: PageRequest): Promise<Page<User>> {
    return guarded(async () => {
      let query = this.db.selectFrom('users').selectAll();
      if (filter.name !== undefined) query = query.where('name', '=', filter.name);
      if (filter.id_prefix !== undefined) query = query.where(sql<boolean>`id::text like ${idPrefixPattern(filter.id_prefix)}`);
      if (filter.project_id !== undefined) {
        query = query.where('project_id', '=', filter.project_id);
      }
      const result = await keysetPage(query, { id: sql`id`, sortKey: [sql`name`, sql`id`], idOf: (row) => row.id }, page);
      return { items: result.items.map(toUser), nextMarker: result.nextMarker };
    });
  }

  deleteUser(id: string): Promise<void> {
    return guarded(() =>
      this.db.transaction().execute(async (trx) => {
        if (!isUuid(id)) throw new NotFoundError('user', id);
        await trx.updateTable('offers').set({ created_by: null }).where('created_by', '=', id).execute();
        await trx.updateTable('leases').set({ created_by: null }).where('created_by', '=', id).execute();
        // API and console tokens go with it (on delete cascade).
        const deleted = await trx.deleteFrom('users').where('id', '=', id).executeTakeFirst();
        if (deleted.numDeletedRows === 0n) throw new NotFoundError('user', id);
      }),
    );
  }

  createToken(input: NewToken, now: Date): Promise<ApiToken> {
    return guarded(async () => {
      if (!isUuid(input.user_id)) throw new NotFoundError('user', input.user_id);
      const row = await this.db
        .insertInto('api_tokens')
        .values({
          user_id: input.user_id,
          token_hash: input.token_hash,
          prefix: input.prefix,
          description: input.description ?? '',
          created_at: now,
          expires_at: input.expires_at ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toToken(row);
    });
  }

  getToken(id: string): Promise<ApiToken | null> {
    return guarded(async () => {
      if (!isUuid(id)) return null;
      const row = await this.db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toToken(row) : null;
    });
  }

  listTokens(
    filter: { readonly user_id?: string; readonly project_id?: string; readonly id_prefix?: string },
    page: PageRequest,
  ): Promise<Page<ApiToken>> {
    return guarded(async () => {
      let query = this.db.selectFrom('api_tokens as t').selectAll('t');
      if (filter.id_prefix !== undefined) query = query.where(sql<boolean>`t.id::text like ${idPrefixPattern(filter.id_prefix)}`);
      if (filter.user_id !== undefined && !isUuid(filter.user_id)) {
        query = query.where(sql<boolean>`false`);
      } else {
        if (filter.user_id !== undefined) query = query.where('t.user_id', '=', filter.user_id);
        if (filter.project_id !== undefined) {
          const projectId = filter.project_id;
          query = query.where('t.user_id', 'in', (eb) =>
            eb.selectFrom('users').select('users.id').where('users.project_id', '=', projectId),
          );
        }
      }
      const result = await keysetPage(
        query,
        { id: sql`t.id`, sortKey: [sql`t.created_at`, sql`t.id`], idOf: (row) => row.id },
        page,
      );
      return { items: result.items.map(toToken), nextMarker: result.nextMarker };
    });
  }

  revokeToken(id: string, now: Date): Promise<ApiToken> {
    return guarded(async () => {
      if (!isUuid(id)) throw new NotFoundError('token', id);
      const row = await this.db
        .updateTable('api_tokens')
        // The first revocation time stands: revoking again changes nothing.
        .set({ revoked_at: sql<Date>`coalesce(revoked_at, ${now})` })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new NotFoundError('token', id);
      return toToken(row);
    });
  }

  authenticate(tokenHash: string, now: Date): Promise<Principal | null> {
    return guarded(async () => (await authenticateMany(this.db, [{ tokenHash, now }]))[0] ?? null);
  }

  authenticateMany(asks: readonly TokenAsk[]): Promise<(Principal | null)[]> {
    return guarded(() => authenticateMany(this.db, asks));
  }

  bootstrapAdmin(
    input: { readonly userName: string; readonly token: Omit<NewToken, 'user_id'> },
    now: Date,
  ): Promise<boolean> {
    return guarded(() => bootstrapAdmin(this.db, input, now));
  }

  syncNodes(nodes: readonly NodeRecord[], now: Date): Promise<SyncResult> {
    return guarded(() => syncNodes(this.db, nodes, now));
  }

  upsertNode(node: NodeRecord, now: Date): Promise<InventoryNode> {
    return guarded(async () => {
      const [row] = await upsertNodes(this.db, [node], now);
      if (!row) throw new Error(`upsert of node ${node.id} returned no row`);
      return toInventoryNode(row);
    });
  }

  upsertNodes(nodes: readonly NodeRecord[], now: Date): Promise<readonly InventoryNode[]> {
    return guarded(async () => {
      if (nodes.length === 0) return [];
      const last = new Map(nodes.map((node) => [node.id, node]));
      const rows = await upsertNodes(this.db, [...last.values()], now);
      const written = new Map(rows.map((row) => [row.id, toInventoryNode(row)]));
      return nodes.map((node) => {
        const row = written.get(node.id);
        if (!row) throw new Error(`upsert of node ${node.id} returned no row`);
        return row;
      });
    });
  }

  getNode(idOrName: string, visibility: NodeVisibility): Promise<NodeView | null> {
    return guarded(async () => {
      // Ironic names are unique; an exact uuid match still wins over a node named like another's uuid.
      const row = await nodeViewQuery(this.db, visibility)
        .where((eb) => eb.or([eb('n.id', '=', idOrName), eb('n.name', '=', idOrName)]))
        .orderBy(sql`n.id = ${idOrName}`, 'desc')
        .limit(1)
        .executeTakeFirst();
      return row ? toNodeView(row) : null;
    });
  }

  nodeWithLease(idOrName: string, now: Date): Promise<NodeWithLease | null> {
    if (!this.nodeReads) return guarded(() => nodeWithLease(this.db, idOrName, now));
    // Every node request reads this (the REST API's, the gateway's under Keystone): kept like the gateway's reads.
    return guarded(() => this.nodeReads!.read(idOrName, now, (at) => nodeWithLeaseUntil(this.db, idOrName, at)));
  }

  tokenWithNode(tokenHash: string, idOrName: string, now: Date): Promise<{ readonly principal: Principal; readonly found: NodeWithLease | null } | null> {
    const read = (at: Date) => tokenWithNode(this.db, tokenHash, idOrName, at);
    if (!this.gatewayReads) return guarded(async () => (await read(now))?.value ?? null);
    // The token hash is hex, so the NUL cannot be in it: no two requests share a key.
    return guarded(() => this.gatewayReads!.read(`${tokenHash}\0${idOrName}`, now, read));
  }

  nodeNames(ids: readonly string[]): Promise<ReadonlyMap<string, string | null>> {
    if (ids.length === 0) return Promise.resolve(new Map());
    return guarded(async () => {
      const rows = await this.db.selectFrom('nodes').select(['id', 'name']).where(inList('id', [...new Set(ids)])).execute();
      return new Map(rows.map((r) => [r.id, r.name]));
    });
  }

  allNodes(): Promise<readonly NodeView[]> {
    return guarded(async () => (await nodeViewQuery(this.db, { kind: 'all' }).execute()).map(toNodeView));
  }

  planningChanges(since: string | null): Promise<PlanningChanges> {
    return guarded(() => planningChanges(this.db, since));
  }

  listNodes(filter: NodeFilter, visibility: NodeVisibility, page: PageRequest): Promise<Page<NodeView>> {
    return guarded(async () => {
      const result = await keysetPage(
        nodeViewQuery(this.db, visibility, filter),
        { id: sql`n.id`, sortKey: NODE_SORT_KEY, idOf: (row) => row.id },
        page,
        // The last node of a page may change or vanish before the next request; its position still counts.
        nodeViewQuery(this.db, visibility, {}, { includeRemoved: true }),
      );
      return { items: result.items.map(toNodeView), nextMarker: result.nextMarker };
    });
  }

  listNodeVersions(filter: NodeFilter, visibility: NodeVisibility, page: PageRequest): Promise<Page<NodeVersion>> {
    return guarded(() => nodeVersionsPage(this.db, filter, visibility, page));
  }

  leaseInForceChanges(since: string | null): Promise<LeaseInForceChanges> {
    return guarded(() => leaseInForceChanges(this.db, since));
  }

  leasesInForce(nodeIds: readonly string[], now: Date): Promise<readonly LeaseInForce[]> {
    return guarded(() => leasesInForce(this.db, nodeIds, now));
  }

  nodeViewsByIds(ids: readonly string[]): Promise<readonly VersionedNode[]> {
    return guarded(() => versionedNodes(this.db, ids));
  }

  nodeFacts(ids: readonly string[]): Promise<ReadonlyMap<string, Pick<NodeView, 'name' | 'facts'>>> {
    if (ids.length === 0) return Promise.resolve(new Map());
    return guarded(async () => {
      // Three columns instead of the whole row: measured at 10,000 nodes, a page of 1,000 whole rows is ≈ 30 ms of
      // parsing and mapping in Node (node-versions.ts), most of it for what an offer does not show.
      const rows = await this.db.selectFrom('nodes').select(['id', 'name', 'facts']).where(inList('id', [...new Set(ids)])).execute();
      return new Map(rows.map((r) => [r.id, { name: r.name, facts: r.facts as NodeFacts }]));
    });
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Why a project cannot be deleted, and what to do instead: "project \"x\" cannot be deleted: it has 2 users; ..." */
function projectInUseMessage(name: string, c: { users: number; leases: number; offers: number; nodes: number }): string {
  const has = [
    c.users > 0 && plural(c.users, 'user'),
    c.leases > 0 && plural(c.leases, 'lease'),
    c.offers > 0 && plural(c.offers, 'offer'),
    c.nodes > 0 && `${plural(c.nodes, 'node')} it owns in Ironic`,
  ].filter((part): part is string => part !== false);
  const list = has.length > 1 ? `${has.slice(0, -1).join(', ')} and ${has.at(-1)}` : has[0];
  const advice = [
    c.users > 0 && 'delete its users first',
    c.nodes > 0 && "give those nodes another owner in Ironic",
    (c.leases > 0 || c.offers > 0) &&
      'a project that has had leases or offers stays for the audit trail (a quota of max_nodes 0 stops its new leases)',
  ].filter((part): part is string => part !== false);
  return `project ${JSON.stringify(name)} cannot be deleted: it has ${list}; ${advice.join('; ')}`;
}
