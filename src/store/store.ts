import type { TokenAsk } from './queries/authenticate-many.js';
import type { SimulatedHardwareStore } from '../domain/simulated-hardware-store.js';
import type { ApiToken, Principal, Project, ProjectQuota, Role, User } from '../domain/identity.js';
import type { InventoryNode, NodeView, PlanNode } from '../domain/inventory.js';
import type { Offer } from '../domain/leasing.js';
import type { ConsoleStore } from './console-store.js';
import type { EngineStore } from './engine-store.js';
import type { CurrentLease, LeasingStore } from './leasing-store.js';
import type { NetworkStore } from './network-store.js';
import type { LifecycleStore } from './lifecycle-store.js';
import type { UsageStore } from './usage-store.js';
import type { NoticeStore } from './notice-store.js';
import type { SubleaseStore } from './sublease-store.js';
import type { WebhookOutbox } from './webhook-outbox.js';
import type { Page, PageRequest } from './page.js';
import type { StatsStore } from './stats-store.js';

/**
 * The Store port: every read and write of Leasehold's state. One implementation (`KyselyStore`) runs on both
 * engines — embedded PGlite and PostgreSQL — and one contract suite (test/store/store-contract.ts) runs on both.
 *
 * Errors: AlreadyExistsError for a taken unique name, NotFoundError for a missing referenced row,
 * BackendUnavailableError when the database cannot be reached. Time is always passed in (`now`) from the
 * injectable clock, never read from the database, so tests control it.
 */

/** Which nodes a caller may see. */
export type NodeVisibility =
  | { readonly kind: 'all' }
  | {
      readonly kind: 'project';
      readonly projectId: string;
      readonly projectName: string;
      /** When set, the project also sees the nodes it leases at this instant. */
      readonly now?: Date;
    };

/** A node with the lease granting access to it at the instant it was read (null: none does). */
export interface NodeWithLease {
  readonly node: NodeView;
  readonly lease: CurrentLease | null;
}

export interface NodeFilter {
  /** A project id or name: nodes whose owner resolves to that project (or whose raw owner equals it). */
  readonly owner?: string;
  readonly resource_class?: string;
  readonly provision_state?: string;
  readonly power_state?: string;
  readonly maintenance?: boolean;
  /** Only these nodes (e.g. those a requirement expression matched). */
  readonly ids?: readonly string[];
  /** Only nodes whose id starts with this (hex digits and dashes: the short ids tables print). */
  readonly id_prefix?: string;
}

export interface UserFilter {
  readonly project_id?: string;
  readonly name?: string;
  readonly id_prefix?: string;
}

/** What the inventory sync writes for one node: everything but the time of the sync. */
export type NodeRecord = Omit<InventoryNode, 'synced_at'>;

export interface SyncResult {
  readonly added: number;
  readonly updated: number;
  readonly removed: number;
  readonly unchanged: number;
}

/** What changed for planning since a watermark (Store.planningChanges). */
export interface PlanningChanges {
  /** Pass it to the next call: everything written before it has been returned by now. */
  readonly watermark: string;
  /** True when this is everything (no watermark was given): what is not listed does not exist. */
  readonly full: boolean;
  /** Nodes written since (removed ones with `removed`, so an index drops them). */
  readonly nodes: readonly { readonly node: PlanNode; readonly removed: boolean }[];
  /** Offers written since, withdrawn ones included (so an index drops them). */
  readonly offers: readonly Offer[];
}

export interface NewProject {
  readonly name: string;
  readonly description?: string;
  readonly quota?: ProjectQuota;
}

export interface ProjectPatch {
  readonly name?: string;
  readonly description?: string;
  readonly quota?: ProjectQuota;
  /** Its own notice offsets (ms); null: the operator's default again. */
  readonly notice_offsets_ms?: readonly number[] | null;
}

export interface NewUser {
  readonly name: string;
  readonly project_id: string | null;
  readonly role: Role;
}

export interface NewToken {
  readonly user_id: string;
  /** SHA-256 of the token value, hex. The value itself is never stored. */
  readonly token_hash: string;
  readonly prefix: string;
  readonly description?: string;
  readonly expires_at?: Date | null;
}

export interface Store {
  readonly engine: 'pglite' | 'postgres';
  /** Offers, leases, the audit log (leasing-store.ts). */
  readonly leasing: LeasingStore;
  /** The lease engine's due tasks and allocation progress (engine-store.ts). */
  readonly tasks: EngineStore;
  /** Lease notifications for the operator's webhook (webhook-outbox.ts). */
  readonly webhooks: WebhookOutbox;
  /** Serial console tokens (console-store.ts). */
  readonly consoles: ConsoleStore;
  /** Tenant networks plugged into nodes (network-store.ts). */
  readonly networks: NetworkStore;
  /** Allocations leaving their leases early: replaced, returned, reclaimed (allocation-store.ts). */
  readonly lifecycle: LifecycleStore;
  /** Counts for the metrics: leases, allocations and nodes by state, the connections in use (stats-store.ts). */
  readonly stats: StatsStore;
  /** Usage accounting: actual use per allocation (issue 17). */
  readonly usage: UsageStore;
  /** Notices before a lease's end and auto-renew (issue 16). */
  readonly notices: NoticeStore;
  /** Sub-leasing reads: what a lessee holds on a node, and the chain of a lease's nodes (sublease-store.ts). */
  readonly subleases: SubleaseStore;
  /** The simulated driver's machines, shared by replicas and kept across restarts (simulated-hardware-store.ts). */
  readonly simulatedHardware: SimulatedHardwareStore;

  /** Throws BackendUnavailableError when the database does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;

  createProject(input: NewProject, now: Date): Promise<Project>;
  /** By id or by name. */
  findProject(idOrName: string): Promise<Project | null>;
  /**
   * The row of a project Keystone owns, made on first sight with its Keystone id and name and renamed when Keystone
   * renamed it (quotas and history stay Leasehold's). A name another project holds here gets the id appended.
   */
  ensureProject(id: string, name: string, now: Date): Promise<{ readonly id: string; readonly name: string }>;
  /**
   * Sorted by name. `ids` restricts the list (a non-admin sees its own project only); `id_prefix`: ids starting
   * with it (a short id as tables print it).
   */
  listProjects(filter: { readonly ids?: readonly string[]; readonly id_prefix?: string }, page: PageRequest): Promise<Page<Project>>;
  updateProject(id: string, patch: ProjectPatch, now: Date): Promise<Project>;
  /**
   * Deletes a project nothing refers to. ConflictError, with the counts in `details` ({users, leases, offers,
   * nodes}), while it has users, has ever had a lease or an offer (kept for the audit trail), or owns live nodes.
   */
  deleteProject(id: string): Promise<void>;

  /** NotFoundError('project', id) when project_id names no project. */
  createUser(input: NewUser, now: Date): Promise<User>;
  getUser(id: string): Promise<User | null>;
  /** Sorted by name. `name`: that user only; `id_prefix`: ids starting with it (a short id as tables print it). */
  listUsers(filter: UserFilter, page: PageRequest): Promise<Page<User>>;
  /**
   * Deletes a user with its API and console tokens (they stop working at once). The leases and offers it created
   * stay, their creator forgotten; the audit log keeps its name.
   */
  deleteUser(id: string): Promise<void>;

  createToken(input: NewToken, now: Date): Promise<ApiToken>;
  getToken(id: string): Promise<ApiToken | null>;
  /** Sorted by creation time. `project_id` lists the tokens of that project's users; `id_prefix`: ids starting with it. */
  listTokens(
    filter: { readonly user_id?: string; readonly project_id?: string; readonly id_prefix?: string },
    page: PageRequest,
  ): Promise<Page<ApiToken>>;
  /** Idempotent: revoking a revoked token keeps the first revocation time. */
  revokeToken(id: string, now: Date): Promise<ApiToken>;
  /** The caller behind a token hash that is neither revoked nor expired at `now`, or null. */
  authenticate(tokenHash: string, now: Date): Promise<Principal | null>;
  /** authenticate for several tokens in one read, in the order asked (each at its own `now`). */
  authenticateMany(asks: readonly TokenAsk[]): Promise<(Principal | null)[]>;
  /**
   * Creates the operator user `userName` (role admin, no project) and its token iff the store has no user yet.
   * Returns true when it did. Safe when several replicas start at the same moment on one database.
   */
  bootstrapAdmin(input: { readonly userName: string; readonly token: Omit<NewToken, 'user_id'> }, now: Date): Promise<boolean>;

  /**
   * Makes the stored inventory equal to `nodes` (the driver's full list): inserts new nodes, updates changed
   * ones, marks nodes missing from the list as removed (hidden from reads; kept for history).
   */
  syncNodes(nodes: readonly NodeRecord[], now: Date): Promise<SyncResult>;
  /** Inserts or updates one node (an on-demand refresh of a single node), un-removing it if needed. */
  upsertNode(node: NodeRecord, now: Date): Promise<InventoryNode>;
  /**
   * upsertNode for many nodes in one statement; resolves to each node as written, in order. A node named twice is
   * written as its last record (the newest the caller had).
   */
  upsertNodes(nodes: readonly NodeRecord[], now: Date): Promise<readonly InventoryNode[]>;
  /** By the driver's uuid or by the node's name (unique in Ironic). */
  getNode(idOrName: string, visibility: NodeVisibility): Promise<NodeView | null>;
  /**
   * A live node by id or name (whoever may see it) with the lease granting access to it at `now`, in one query:
   * what a node request decides on (the caller's relation to it is decided from these, domain/policy.ts).
   */
  nodeWithLease(idOrName: string, now: Date): Promise<NodeWithLease | null>;
  /**
   * authenticate and nodeWithLease in one query (a gateway node request): null when the token does not
   * authenticate at `now` (then nothing of the node is read); `found` null when there is no such node.
   */
  tokenWithNode(tokenHash: string, idOrName: string, now: Date): Promise<{ readonly principal: Principal; readonly found: NodeWithLease | null } | null>;
  /** Node names by id, for responses that mention nodes (one indexed query, not the whole inventory). */
  nodeNames(ids: readonly string[]): Promise<ReadonlyMap<string, string | null>>;
  /** Every live node with its resolved owner, for the scheduler (one query; ~10k rows is fine). */
  allNodes(): Promise<readonly NodeView[]>;
  /**
   * The nodes (planning's columns, owner resolved) and offers written since `since`, a watermark an earlier call
   * returned (null: all of them): how each replica keeps its in-memory planning index current with one small
   * query per plan. No change is ever missed, whatever the order in which concurrent writers commit (migration 0009).
   */
  planningChanges(since: string | null): Promise<PlanningChanges>;
  /** Sorted by name, then id. */
  listNodes(filter: NodeFilter, visibility: NodeVisibility, page: PageRequest): Promise<Page<NodeView>>;
  /**
   * The same page as listNodes, as ids and row versions only (a version changes with every write to the node or
   * to the project owning it): for a reader that keeps nodes it has read, so it reads again only what changed.
   */
  listNodeVersions(filter: NodeFilter, visibility: NodeVisibility, page: PageRequest): Promise<Page<NodeVersion>>;
  /**
   * The nodes whose lease in force may have changed since `since`, a watermark an earlier call returned (null: the
   * watermark alone, and everything counts as changed), and the projects renamed since: how each replica keeps
   * its copy of the leases in force (leasesInForce) current with one small query. No change is ever missed,
   * whatever the order in which concurrent writers commit (migrations 0009 and 0017).
   */
  leaseInForceChanges(since: string | null): Promise<LeaseInForceChanges>;
  /** The lease granting access to each node at `now`, its project's name, and until when that holds without a write. */
  leasesInForce(nodeIds: readonly string[], now: Date): Promise<readonly LeaseInForce[]>;
  /** Nodes by id (removed ones too), with their versions as listNodeVersions gives them; unknown ids are left out. */
  nodeViewsByIds(ids: readonly string[]): Promise<readonly VersionedNode[]>;
  /** Names and facts of nodes by id (removed ones too; unknown ids left out): what an offer shows of its node. */
  nodeFacts(ids: readonly string[]): Promise<ReadonlyMap<string, Pick<NodeView, 'name' | 'facts'>>>;
}

export interface NodeVersion {
  readonly id: string;
  readonly version: string;
}

/** What changed for the leases in force since a watermark (Store.leaseInForceChanges). */
export interface LeaseInForceChanges {
  /** Pass it to the next call: everything written before it has been returned by now. */
  readonly watermark: string;
  /** True when no watermark was given: every node counts as changed. */
  readonly full: boolean;
  readonly nodeIds: readonly string[];
  /** Projects created or renamed since: a lease of theirs is shown with another name. */
  readonly projectIds: readonly string[];
}

/** The lease granting access to a node at an instant (Store.leasesInForce). */
export interface LeaseInForce {
  readonly node_id: string;
  readonly lease: CurrentLease | null;
  /** The name of the lease's project (null: no lease now, or a project without a row). */
  readonly lessee_name: string | null;
  /** Epoch ms: the next instant at which the answer may change with no write (Infinity: none). */
  readonly until: number;
}

export interface VersionedNode {
  readonly node: NodeView;
  readonly version: string;
}
