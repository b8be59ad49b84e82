import { Role, roleAtLeast, type Principal, type User } from './identity.js';
import type { PolicySubject } from './policy-rules/rule-expression.js';

/**
 * Who may do what with projects, users, tokens, offers and leases, and how a caller relates to a node (its
 * visibility, its access, the subject the node rules are decided on). Pure functions of the caller and the
 * thing, so the REST API, the gateway and the console decide the same way. What may be done to a node — power,
 * boot device, console, each field — is the node policy's rules, named after Ironic's (policy-rules/).
 *
 * Convention: when a caller may not even know a thing exists, callers answer 404, not 403 (see `canSee*`).
 */

export const isAdmin = (p: Principal): boolean => p.role === Role.Admin;

/**
 * Nodes a caller sees: all for the operator; for a project, the nodes it owns and those its leases grant at `now`
 * (the store applies it, reading the lease table at the instant of the request).
 */
export function nodeVisibility(
  p: Principal,
  now: Date,
):
  | { readonly kind: 'all' }
  | { readonly kind: 'project'; readonly projectId: string; readonly projectName: string; readonly now: Date } {
  if (isAdmin(p) || p.projectId === null || p.projectName === null) return { kind: 'all' };
  return { kind: 'project', projectId: p.projectId, projectName: p.projectName, now };
}

export const canCreateProject = isAdmin;
export const canUpdateProject = isAdmin;
export const canDeleteProject = isAdmin;
export const canSetNodeOwner = isAdmin;
export const canSyncInventory = isAdmin;

export function canSeeProject(p: Principal, projectId: string): boolean {
  return isAdmin(p) || p.projectId === projectId;
}

/** Operators create anyone; a project's manager creates users of its own project, up to manager. */
export function canCreateUser(p: Principal, projectId: string | null, role: Role): boolean {
  if (isAdmin(p)) return true;
  return (
    role !== Role.Admin && projectId !== null && projectId === p.projectId && roleAtLeast(p.role, Role.Manager)
  );
}

export function canSeeUser(p: Principal, user: Pick<User, 'id' | 'project_id'>): boolean {
  return isAdmin(p) || user.id === p.userId || (user.project_id !== null && user.project_id === p.projectId);
}

/**
 * Deleting a user: the operator, or the manager of the user's project (never an operator); nobody deletes itself
 * (the route says so), so the last operator always remains.
 */
export function canDeleteUser(p: Principal, user: Pick<User, 'id' | 'project_id' | 'role'>): boolean {
  if (user.id === p.userId) return false;
  if (isAdmin(p)) return true;
  return user.role !== Role.Admin && user.project_id !== null && user.project_id === p.projectId && roleAtLeast(p.role, Role.Manager);
}

/**
 * Tokens for a user are issued and revoked by the operator, by the manager of the user's project (never for
 * an operator), or by the user itself for its own account.
 */
export function canManageTokensOf(p: Principal, user: Pick<User, 'id' | 'project_id' | 'role'>): boolean {
  if (isAdmin(p) || user.id === p.userId) return true;
  return (
    user.role !== Role.Admin &&
    user.project_id !== null &&
    user.project_id === p.projectId &&
    roleAtLeast(p.role, Role.Manager)
  );
}

/** How a caller relates to a node: the operator, its owner, its lessee right now, or nothing (404). */
export type NodeAccess = 'admin' | 'owner' | 'lessee';

export function nodeAccess(
  p: Principal,
  node: { readonly owner_project: { readonly id: string } | null },
  leasedByCallerNow: boolean,
): NodeAccess | null {
  if (isAdmin(p)) return 'admin';
  if (p.projectId !== null && node.owner_project?.id === p.projectId) return 'owner';
  return leasedByCallerNow ? 'lessee' : null;
}

/**
 * The facts the node policy rules (policy-rules/) are decided on: the caller's role, whether it is the operator,
 * and how it relates to the node right now. Owner and lessee can both hold (an owner leasing its own node).
 */
export function nodeSubject(
  p: Principal,
  node: { readonly owner_project: { readonly id: string } | null },
  leasedByCallerNow: boolean,
): PolicySubject {
  return {
    is_admin: isAdmin(p),
    is_node_owner: p.projectId !== null && node.owner_project?.id === p.projectId,
    is_node_lessee: p.projectId !== null && leasedByCallerNow,
    role: p.role,
  };
}

/** Putting a node in the pool, withdrawing it, clearing its quarantine: its owner's members, or the operator. */
export function canManageOwnedNode(p: Principal, access: NodeAccess | null): boolean {
  return access === 'admin' || (access === 'owner' && roleAtLeast(p.role, Role.Member));
}

/** Creating, changing and ending a project's leases: its members, or the operator. */
/** A project's notice offsets before its leases end: the operator, or the project's own manager (issue 16). */
export function canSetNoticeOffsets(p: Principal, projectId: string): boolean {
  return isAdmin(p) || (p.projectId === projectId && roleAtLeast(p.role, Role.Manager));
}

/**
 * Whose leases a caller may ask for (create or quote): its own project's, or, for the operator, any project's — the
 * lease then is that project's in every way (quota, budget, offers), with the operator recorded as the actor.
 */
export function canLeaseFor(p: Principal, projectId: string): boolean {
  return isAdmin(p) || p.projectId === projectId;
}

export function canChangeLeasesOf(p: Principal, projectId: string): boolean {
  return isAdmin(p) || (p.projectId === projectId && roleAtLeast(p.role, Role.Member));
}
