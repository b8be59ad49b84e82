import type { EntryDeps } from '../access/entry-deps.js';
import type { Lease } from '../domain/leasing.js';
import { noticeSchedule } from '../domain/notices.js';
import type { LeaseNames } from './serializers.js';

/**
 * Node names, lessee project names, the notices of each lease's current end and the sub-leasing chain for leases
 * in a response (a page holds at most 1000 leases, so as many projects).
 */
export async function leaseNames(deps: Pick<EntryDeps, 'store' | 'leasing'>, leases: readonly Lease[]): Promise<LeaseNames> {
  const ids = [...new Set(leases.map((l) => l.project_id))];
  // Four independent reads at once (on PostgreSQL over as many connections): one round trip's wait, not four.
  const [nodes, projects, chain, sent] = await Promise.all([
    deps.store.nodeNames(leases.flatMap((l) => l.allocations.map((a) => a.node_id))),
    ids.length === 0 ? [] : deps.store.listProjects({ ids }, { limit: 1000 }).then((page) => page.items),
    deps.store.subleases.links(leases.flatMap((l) => l.allocations.map((a) => a.id))),
    deps.store.notices.sentNotices(leases.map((l) => ({ id: l.id, end: l.end }))),
  ]);
  // The notices of each lease's current end: the same instants the engine sends them at (domain/notices.ts).
  const offsetsOf = new Map(projects.map((p) => [p.id, p.notice_offsets_ms ?? deps.leasing.noticeOffsetsMs]));
  const notices = new Map(
    leases.map((l) => [l.id, noticeSchedule(l, offsetsOf.get(l.project_id) ?? deps.leasing.noticeOffsetsMs, sent.get(l.id) ?? new Map())]),
  );
  return { nodes, projects: new Map(projects.map((p) => [p.id, p.name])), notices, chain };
}
