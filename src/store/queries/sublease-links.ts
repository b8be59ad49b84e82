import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';

/** A lease at the other end of a sub-leasing link, as lease and node views show it. */
export interface LinkedLease {
  readonly lease_id: string;
  readonly lease_name: string;
  readonly project_id: string;
  readonly project_name: string;
  /** That lease's window on the node. */
  readonly start: Date;
  readonly end: Date;
  readonly state: string;
}

/** The chain through one allocation: the lease it is sub-leased from, and the sub-leases carved from it. */
export interface SubleaseLinks {
  readonly parent: LinkedLease | null;
  readonly subleases: readonly LinkedLease[];
}

/**
 * The sub-leasing chain of each allocation given (two queries whatever their number): allocations with neither a
 * parent nor sub-leases are left out of the map. Cancelled sub-leases are left out (they never held the node).
 */
export async function subleaseLinks(db: Kysely<Database>, allocationIds: readonly string[]): Promise<ReadonlyMap<string, SubleaseLinks>> {
  const ids = [...new Set(allocationIds)];
  if (ids.length === 0) return new Map();
  const linked = (alias: 'p' | 's') => sql<LinkedLease & { key: string }>`
    select a.id as key, ${sql.ref(`${alias}.lease_id`)} as lease_id, l.name as lease_name, l.project_id, pr.name as project_name,
           lower(${sql.ref(`${alias}.period`)}) as start, upper(${sql.ref(`${alias}.period`)}) as "end", l.state`;
  const { rows: parents } = await sql<LinkedLease & { key: string }>`
    ${linked('p')}
      from unnest(${ids}::uuid[]) as t(id)
      join allocations a on a.id = t.id
      join allocations p on p.id = a.parent_allocation_id
      join leases l on l.id = p.lease_id
      join projects pr on pr.id = l.project_id`.execute(db);
  const { rows: subs } = await sql<LinkedLease & { key: string }>`
    ${linked('s')}
      from unnest(${ids}::uuid[]) as t(id)
      join allocations a on a.id = t.id
      join allocations s on s.parent_allocation_id = a.id and s.state <> 'cancelled'
      join leases l on l.id = s.lease_id
      join projects pr on pr.id = l.project_id
     order by lower(s.period)`.execute(db);
  const out = new Map<string, { parent: LinkedLease | null; subleases: LinkedLease[] }>();
  const entry = (key: string) => out.get(key) ?? out.set(key, { parent: null, subleases: [] }).get(key)!;
  for (const { key, ...p } of parents) entry(key).parent = p;
  for (const { key, ...s } of subs) entry(key).subleases.push(s);
  return out;
}

/**
 * The lease a lease's hold on a node at `at` is sub-leased from (what a node view shows beside its current lease),
 * or null when that hold is not a sub-lease.
 */
export async function parentOnNode(db: Kysely<Database>, nodeId: string, leaseId: string, at: Date): Promise<LinkedLease | null> {
  const row = await db
    .selectFrom('allocations as a')
    .select('a.id')
    .where('a.node_id', '=', nodeId)
    .where('a.lease_id', '=', leaseId)
    .where('a.parent_allocation_id', 'is not', null)
    .where(sql<boolean>`a.period @> ${at}::timestamptz`)
    .executeTakeFirst();
  return row ? ((await subleaseLinks(db, [row.id])).get(row.id)?.parent ?? null) : null;
}
