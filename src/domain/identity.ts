/** Projects, users, roles and tokens: the identity model (pure data, no I/O). */

export const Role = { Reader: 'reader', Member: 'member', Manager: 'manager', Admin: 'admin' } as const;
export type Role = (typeof Role)[keyof typeof Role];
export const PROJECT_ROLES = [Role.Reader, Role.Member, Role.Manager] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

const RANK: Readonly<Record<Role, number>> = { reader: 0, member: 1, manager: 2, admin: 3 };

/** True when `role` includes everything `required` may do (reader < member < manager < admin). */
export function roleAtLeast(role: Role, required: Role): boolean {
  return RANK[role] >= RANK[required];
}

export interface ProjectQuota {
  /** Most nodes the project may hold in leases at one time. */
  readonly max_nodes?: number | null;
  /** Longest lease, in milliseconds. */
  readonly max_lease_duration_ms?: number | null;
  /** Node-hours booked per calendar month (UTC). */
  readonly max_node_hours?: number | null;
}

export interface Project {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly quota: ProjectQuota;
  /** Its own notice offsets before a lease's end (ms, largest first), or null: the operator's default. */
  readonly notice_offsets_ms: readonly number[] | null;
  readonly created_at: Date;
  readonly updated_at: Date;
}

export interface User {
  readonly id: string;
  readonly name: string;
  /** Null only for operators (role `admin`) that belong to no project. */
  readonly project_id: string | null;
  readonly role: Role;
  readonly created_at: Date;
}

export interface ApiToken {
  readonly id: string;
  readonly user_id: string;
  /** The first characters of the token, to recognise it in lists; never enough to use it. */
  readonly prefix: string;
  readonly description: string;
  readonly created_at: Date;
  readonly expires_at: Date | null;
  readonly revoked_at: Date | null;
}

/** Who is calling: resolved from a token at the start of every request. */
export interface Principal {
  /** A local user's uuid, or a Keystone user's id. */
  readonly userId: string;
  readonly userName: string;
  readonly role: Role;
  readonly projectId: string | null;
  readonly projectName: string | null;
  /** The local API token's id (or console token's); for a Keystone token, an id of its own (a hash prefix). */
  readonly tokenId: string;
  /** Who vouched for the caller: absent for a local user (a row in `users`), `keystone` for a Keystone user. */
  readonly source?: 'keystone';
}

/** The id of the caller's row in `users`, or null for a Keystone user (it has none: the audit log names it). */
export function localUserId(p: Pick<Principal, 'userId' | 'source'>): string | null {
  return p.source === 'keystone' ? null : p.userId;
}

/** What a console token keeps of a Keystone principal. */
export function snapshotOf(p: Principal): PrincipalSnapshot {
  return { userId: p.userId, userName: p.userName, role: p.role, projectId: p.projectId, projectName: p.projectName };
}

/**
 * What a Keystone user's console token keeps of its identity (it has no `users` row to read again): stored with
 * the token, and the principal its connections are re-checked as.
 */
export interface PrincipalSnapshot {
  readonly userId: string;
  readonly userName: string;
  readonly role: Role;
  readonly projectId: string | null;
  readonly projectName: string | null;
}
