import { nodeMatcher, nodesKnownTo } from '../access/node-access.js';
import { ConflictError, ErrorCode, ForbiddenError, InvalidRequestError, isLeaseholdError } from '../domain/errors.js';
import { Role, roleAtLeast, type Principal } from '../domain/identity.js';
import type { NodeView } from '../domain/inventory.js';
import { isAdmin } from '../domain/policy.js';
import type { ApiDeps } from './context.js';

/**
 * Offering many nodes at once (issue 17): which nodes a request names — a list of ids or names, or a requirement
 * expression over the caller's nodes — and, for each that cannot be offered, why. The route refuses the whole
 * request when any node has a problem (all-or-nothing), listing them all, so an owner fixes the list once.
 */

/** A request offers at most this many nodes: the whole batch is one transaction and one answer. */
export const MAX_BULK_OFFER_NODES = 1000;

/** Why one node of a bulk offer cannot be offered. */
export interface NodeProblem {
  /** What the request named it by (the id or name given; for an expression, the node's id). */
  readonly node: string;
  readonly node_id: string | null;
  readonly node_name: string | null;
  readonly code: ErrorCode;
  readonly message: string;
}

export interface BulkTargets {
  readonly nodes: readonly NodeView[];
  /** What the request named each node by (node id → the id or name given). */
  readonly asked: ReadonlyMap<string, string>;
  readonly problems: readonly NodeProblem[];
}

const problem = (node: string, view: NodeView | null, code: ErrorCode, message: string): NodeProblem => ({
  node,
  node_id: view?.id ?? null,
  node_name: view?.name ?? null,
  code,
  message,
});

/** Only members of the owning project (or the operator) offer nodes: a reader is refused once, not per node. */
function checkMayOffer(principal: Principal): void {
  if (isAdmin(principal)) return;
  if (principal.projectId === null || !roleAtLeast(principal.role, Role.Member)) {
    throw new ForbiddenError("only the nodes' owner (a member) or an operator can offer them");
  }
}

/** A node the caller may offer: its own project's (any for the operator), with an owner project to offer for. */
function nodeProblem(principal: Principal, key: string, node: NodeView): NodeProblem | null {
  if (!isAdmin(principal) && node.owner_project?.id !== principal.projectId) {
    return problem(key, node, ErrorCode.Forbidden, `node ${node.name ?? node.id} is not your project's: only its owner offers it (a lessee sub-offers one node at a time)`);
  }
  if (!node.owner_project) return problem(key, node, ErrorCode.Conflict, `node ${node.name ?? node.id} has no owner project; the operator sets one first`);
  return null;
}

/**
 * The nodes a bulk offer names, each once, with the problems of those it cannot offer. A list: each id or name
 * among the nodes the caller may know of (anything else is `not_found`, as a node it cannot see). An expression:
 * the caller's own nodes that match it (the operator: every node); none matching is a 400.
 */
export async function bulkTargets(deps: ApiDeps, principal: Principal, ask: { readonly nodes?: readonly string[]; readonly where?: string }): Promise<BulkTargets> {
  checkMayOffer(principal);
  const known = await nodesKnownTo(deps, principal);
  const problems: NodeProblem[] = [];
  const chosen = new Map<string, NodeView>();
  const asked = new Map<string, string>();
  if (ask.nodes !== undefined) {
    const byKey = new Map<string, NodeView>();
    for (const n of known) {
      byKey.set(n.id, n);
      if (n.name !== null) byKey.set(n.name, n);
    }
    for (const key of ask.nodes) {
      const node = byKey.get(key);
      if (!node) {
        problems.push(problem(key, null, ErrorCode.NotFound, `no node ${JSON.stringify(key)} is known to you`));
        continue;
      }
      if (chosen.has(node.id)) continue;
      const p = nodeProblem(principal, key, node);
      if (p) problems.push(p);
      else {
        chosen.set(node.id, node);
        asked.set(node.id, key);
      }
    }
    return { nodes: [...chosen.values()], asked, problems };
  }
  const where = ask.where!;
  const matches = nodeMatcher(where, known);
  const mine = known.filter((n) => (isAdmin(principal) || n.owner_project?.id === principal.projectId) && matches(n));
  if (mine.length === 0) {
    throw new InvalidRequestError(`where: no node ${isAdmin(principal) ? '' : 'of your project '}matches ${JSON.stringify(where)}; nothing was offered`, {
      details: { field: 'where' },
    });
  }
  if (mine.length > MAX_BULK_OFFER_NODES) {
    throw new InvalidRequestError(`where: ${mine.length} nodes match; one request offers at most ${MAX_BULK_OFFER_NODES}: narrow the expression`, {
      details: { field: 'where', matched: mine.length, max: MAX_BULK_OFFER_NODES },
    });
  }
  for (const node of mine) {
    const p = nodeProblem(principal, node.id, node);
    if (p) problems.push(p);
    else {
      chosen.set(node.id, node);
      asked.set(node.id, node.id);
    }
  }
  return { nodes: [...chosen.values()], asked, problems };
}

/** The one refusal of a bulk offer: 409 `conflict`, every node's problem in `details.nodes`, nothing created. */
export function bulkRefusal(problems: readonly NodeProblem[], asked: number): ConflictError {
  const count = problems.length;
  return new ConflictError(`${count} of ${asked} node${asked === 1 ? '' : 's'} cannot be offered; nothing was offered`, {
    details: { nodes: problems.map((p) => ({ ...p })) },
  });
}

/** A conflict the store met on one node (a concurrent offer won it): that node's problem, or null for anything else. */
export function storeProblem(err: unknown, targets: Pick<BulkTargets, 'nodes' | 'asked'>): NodeProblem | null {
  if (!isLeaseholdError(err) || err.code !== ErrorCode.Conflict) return null;
  const nodeId = err.details['node_id'];
  const node = targets.nodes.find((n) => n.id === nodeId);
  return node ? problem(targets.asked.get(node.id) ?? node.id, node, ErrorCode.Conflict, `node ${node.name ?? node.id}: ${err.message}`) : null;
}
