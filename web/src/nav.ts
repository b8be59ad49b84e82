import type { ComponentType } from 'react';

export type Role = 'admin' | 'manager' | 'member' | 'reader';

/** Who vouches for users and tokens: Leasehold itself, or the cloud's Keystone (LEASEHOLD_IDENTITY). */
export type Identity = 'local' | 'keystone';

/** The signed-in user as the UI needs it (from GET /v1/me, plus whether the project owns nodes). */
export interface Viewer {
  userId: string;
  userName: string;
  role: Role;
  project: { id: string; name: string } | null;
  /** The project owns at least one node: its users get the owner pages. */
  ownsNodes: boolean;
  /** Under Keystone, users, tokens and projects are Keystone's: Leasehold's pages for them do not apply. */
  identity: Identity;
}

/** Who may see a page. The API is the real guard (it answers 404 to what a caller may not see); this only keeps
 * the navigation honest, so nobody is offered a page that would be empty or refused. */
export type Audience = (viewer: Viewer) => boolean;

export const audiences = {
  everyone: (() => true) as Audience,
  admins: ((v) => v.role === 'admin') as Audience,
  /** The operator, when users and tokens are Leasehold's own (under Keystone the API answers 409 to them). */
  userAdmins: ((v) => v.role === 'admin' && v.identity === 'local') as Audience,
  /** The operator, and users of a project that owns nodes. */
  owners: ((v) => v.role === 'admin' || v.ownsNodes) as Audience,
  /** Those who may act (lease, power, console) rather than only read. */
  actors: ((v) => v.role !== 'reader') as Audience,
  /** Those who may request leases: project members and up, and the operator (for a project it picks). */
  lessees: ((v) => v.role === 'admin' || (v.role !== 'reader' && v.project !== null)) as Audience,
};

export interface AppRoute {
  /** A wouter path pattern, hash-free: `/leases/:id`. */
  path: string;
  page: ComponentType;
  audience: Audience;
  /** The label in the navigation; routes without one (detail pages) are reached by links. */
  nav?: string;
}

/** The navigation for this viewer, in the order the routes are declared. */
export function navFor(routes: readonly AppRoute[], viewer: Viewer): Array<{ path: string; label: string }> {
  return routes.filter((r) => r.nav && r.audience(viewer)).map((r) => ({ path: r.path, label: r.nav! }));
}

export function canRoleAct(viewer: Viewer): boolean {
  return audiences.actors(viewer);
}

/**
 * The one navigation entry to highlight: the longest path that is the location or a parent of it, so a section
 * stays highlighted on its detail pages (/leases/:id under /leases) but /leases/new highlights only its own entry.
 */
export function activeNavPath(paths: readonly string[], location: string): string | null {
  const matching = paths.filter((p) => location === p || location.startsWith(`${p}/`));
  return matching.sort((a, b) => b.length - a.length)[0] ?? null;
}
