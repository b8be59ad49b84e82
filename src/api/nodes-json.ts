import type { EntryDeps } from '../access/entry-deps.js';
import type { Principal } from '../domain/identity.js';
import type { NodeView } from '../domain/inventory.js';
import { nodeAccess } from '../domain/policy.js';
import { nodeJson } from './serializers.js';

/** Nodes as JSON for this caller: the current lease shown to the operator, the owner and the lessee only. */
export async function nodesJson(deps: EntryDeps, principal: Principal, nodes: readonly NodeView[]) {
  const leases = await deps.store.leasing.currentLeases(nodes.map((n) => n.id), deps.clock.now());
  return nodes.map((node) => {
    const lease = leases.get(node.id) ?? null;
    const access = nodeAccess(principal, node, lease !== null && lease.project_id === principal.projectId) ?? 'lessee';
    return nodeJson(node, { access, lease });
  });
}
