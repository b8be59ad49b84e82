import type { EntryDeps } from '../access/entry-deps.js';
import type { Lease } from '../domain/leasing.js';
import type { LeaseNames } from './serializers.js';

/** Node names, lessee project names and the sub-leasing chain for leases in a response (a page holds at most 1000 leases, so as many projects). */
export async function leaseNames(deps: Pick<EntryDeps, 'store'>, leases: readonly Lease[]): Promise<LeaseNames> {
  const nodes = await deps.store.nodeNames(leases.flatMap((l) => l.allocations.map((a) => a.node_id)));
  const ids = [...new Set(leases.map((l) => l.project_id))];
  const [projects, chain] = await Promise.all([
    ids.length === 0 ? [] : deps.store.listProjects({ ids }, { limit: 1000 }).then((page) => page.items),
    deps.store.subleases.links(leases.flatMap((l) => l.allocations.map((a) => a.id))),
  ]);
  return { nodes, projects: new Map(projects.map((p) => [p.id, p.name])), chain };
}
