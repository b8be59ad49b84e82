import type { NodeFacts } from '../inventory.js';

/** A node that could serve a group: it matches the group's expression and is free and allowed for the window. */
export interface Candidate {
  readonly id: string;
  readonly name: string | null;
  readonly facts: NodeFacts;
}

/**
 * The best-fit cost of a node: its capacity, compared lexicographically, scarcest resource first —
 * GPUs, then memory, then CPUs, then disk, then name and id (so ties are broken the same way every time).
 * The cheapest node that satisfies a group is the smallest one, so a 16 GiB request never takes the 1 TiB
 * machine while a 16 GiB machine is free (the point of the exact-match filters in the Nova-Ironic spec).
 */
export function costKey(node: Candidate): readonly (number | string)[] {
  const n = (name: string) => (typeof node.facts[name] === 'number' ? (node.facts[name] as number) : 0);
  return [n('gpus'), n('memory'), n('cpus'), n('disk'), node.name ?? '', node.id];
}

export function compareCost(a: Candidate, b: Candidate): number {
  return compareCostKeys(costKey(a), costKey(b));
}

/** compareCost on keys computed once (sorting a whole inventory computes each node's key once, not per comparison). */
export function compareCostKeys(ka: readonly (number | string)[], kb: readonly (number | string)[]): number {
  for (let i = 0; i < ka.length; i++) {
    const x = ka[i]!;
    const y = kb[i]!;
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

export interface GroupDemand {
  readonly count: number;
  /** Candidates for this group (any order). A node may be a candidate of several groups. */
  readonly candidates: readonly Candidate[];
}

export type Assignment =
  | { readonly ok: true; readonly nodes: readonly (readonly string[])[] }
  | { readonly ok: false; readonly assigned: readonly number[] };

/**
 * Assigns distinct nodes to every group, all or nothing. Each group's candidates are tried cheapest first;
 * when a node is wanted by two groups, an augmenting path (Kuhn's matching) moves the earlier group to its next
 * candidate, so a request is only refused when no assignment exists at all — greedy alone would refuse
 * "1 × (gpus >= 1) + 1 × (gpus >= 8)" when the 8-GPU node was the cheapest match of the first group.
 * Groups with fewer candidates are placed first, which keeps the paths short.
 *
 * Returns the node ids per group (in the groups' order), or how many nodes each group could get.
 */
export function assignBestFit(groups: readonly GroupDemand[]): Assignment {
  const sorted = groups.map((g) => [...g.candidates].sort(compareCost));
  const result = assignInOrder(groups.map((g, i) => ({ count: g.count, candidates: sorted[i]!.map((c) => c.id) })));
  if (!result.ok) return result;
  // Within a group, report nodes cheapest first (augmenting may have shuffled them).
  const byId = new Map(groups.flatMap((g) => g.candidates.map((c) => [c.id, c] as const)));
  return { ok: true, nodes: result.nodes.map((ids) => [...ids].sort((a, b) => compareCost(byId.get(a)!, byId.get(b)!))) };
}

/**
 * The matching behind assignBestFit, over candidate ids already in order of preference (best first) per group:
 * what the booking transaction uses to replace nodes taken meanwhile with the next best it could lock. Within a
 * group, nodes come back in the order of its list.
 */
export function assignInOrder(groups: readonly { readonly count: number; readonly candidates: readonly string[] }[]): Assignment {
  const order = groups
    .map((_, i) => i)
    .sort((a, b) => groups[a]!.candidates.length - groups[a]!.count - (groups[b]!.candidates.length - groups[b]!.count) || a - b);
  const slots: number[] = []; // slot -> group index
  for (const g of order) for (let k = 0; k < groups[g]!.count; k++) slots.push(g);

  const slotOf = new Map<string, number>(); // node id -> slot
  const nodeOf: (string | null)[] = slots.map(() => null);

  const tryAssign = (slot: number, visited: Set<string>): boolean => {
    for (const node of groups[slots[slot]!]!.candidates) {
      if (visited.has(node)) continue;
      visited.add(node);
      const holder = slotOf.get(node);
      if (holder === undefined || tryAssign(holder, visited)) {
        slotOf.set(node, slot);
        nodeOf[slot] = node;
        return true;
      }
    }
    return false;
  };

  let complete = true;
  for (let s = 0; s < slots.length; s++) {
    if (!tryAssign(s, new Set())) complete = false;
  }

  const perGroup: string[][] = groups.map(() => []);
  nodeOf.forEach((id, slot) => {
    if (id !== null) perGroup[slots[slot]!]!.push(id);
  });
  if (!complete) return { ok: false, assigned: perGroup.map((ids) => ids.length) };
  return {
    ok: true,
    nodes: perGroup.map((ids, g) => {
      const rank = new Map(groups[g]!.candidates.map((id, i) => [id, i]));
      return ids.sort((a, b) => rank.get(a)! - rank.get(b)!);
    }),
  };
}
