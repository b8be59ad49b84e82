import { NotFoundError } from '../domain/errors.js';
import { compileRequirement } from '../domain/expression/compile.js';
import { evaluate } from '../domain/expression/evaluate.js';
import type { Principal } from '../domain/identity.js';
import type { NodeView } from '../domain/inventory.js';
import { nodeAccess, nodeSubject, nodeVisibility, type NodeAccess } from '../domain/policy.js';
import { checkIdOrName } from '../domain/text-bounds.js';
import type { PolicySubject } from '../domain/policy-rules/rule-expression.js';
import type { CurrentLease } from '../store/leasing-store.js';
import type { NodeWithLease } from '../store/store.js';
import type { EntryDeps } from './entry-deps.js';

export interface NodeInView {
  readonly node: NodeView;
  readonly access: NodeAccess;
  readonly lease: CurrentLease | null;
  /** What the node policy rules are decided on (deps.policy.allows(rule, subject)). */
  readonly subject: PolicySubject;
}

/**
 * Finds a node the caller may see and how it relates to it, deciding from the lease table at this instant:
 * a lessee's access starts and stops exactly at its lease's start and end. Anything else is a 404. One query
 * (the node with its current lease), or none when `read` is the one made with this request's token
 * (Store.tokenWithNode, after the token was known: never a read begun before the caller was).
 */
export async function nodeForCaller(deps: EntryDeps, principal: Principal, idOrName: string, read?: { readonly found: NodeWithLease | null }): Promise<NodeInView> {
  checkIdOrName(idOrName, 'node');
  const found = read ? read.found : await deps.store.nodeWithLease(idOrName, deps.clock.now());
  if (!found) throw new NotFoundError('node', idOrName);
  const { node, lease } = found;
  const leasedByCaller = lease !== null && lease.project_id === principal.projectId;
  const access = nodeAccess(principal, node, leasedByCaller);
  if (access === null) throw new NotFoundError('node', idOrName);
  return { node, access, lease, subject: nodeSubject(principal, node, leasedByCaller) };
}

/**
 * A `where=` requirement expression as a test on nodes, checked against the facts the inventory knows (`nodes`);
 * a bad one is a 400 naming the position, with `details.field: "where"`. One grammar for nodes, offers, the
 * availability timeline and lease groups.
 */
export function nodeMatcher(source: string, nodes: readonly NodeView[]): (node: NodeView) => boolean {
  const expr = compileRequirement(source, nodes.map((n) => n.facts), { name: 'where' });
  return (node) => evaluate(expr, node);
}

/**
 * The nodes a caller may know of: every node for the operator; for a project, those it owns, leases now, or is
 * offered. An expression's known facts come from these alone, so an unknown-fact answer never lists the facts of
 * nodes the caller cannot see (issue 11).
 */
export async function nodesKnownTo(deps: EntryDeps, principal: Principal): Promise<readonly NodeView[]> {
  const all = await deps.store.allNodes();
  const visibility = nodeVisibility(principal, deps.clock.now());
  if (visibility.kind === 'all') return all;
  const [offered, leased] = await Promise.all([
    deps.store.leasing.offeredNodeIds(visibility.projectId, visibility.now),
    deps.store.leasing.leasedNodeIds(visibility.projectId, visibility.now),
  ]);
  const known = new Set([...offered, ...leased]);
  return all.filter((n) => known.has(n.id) || n.owner_project?.id === visibility.projectId);
}

/** The ids of the nodes a `where=` expression matches, among those the caller may know of. */
export async function nodesMatching(deps: EntryDeps, principal: Principal, source: string): Promise<string[]> {
  const nodes = await nodesKnownTo(deps, principal);
  const matches = nodeMatcher(source, nodes);
  return nodes.filter(matches).map((n) => n.id);
}
