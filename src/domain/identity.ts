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
}

export interface Project {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly quota: ProjectQuota;
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
  readonly userId: string;
  readonly userName: string;
  readonly role: Role;
  readonly projectId: string | null;
  readonly projectName: string | null;
  readonly tokenId: string;
}
