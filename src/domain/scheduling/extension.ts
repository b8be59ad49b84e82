import type { PlanNode } from '../inventory.js';
import { offerAllows } from '../leasing.js';
import { offerLengthCap, type AssessContext, type Refusal } from './assess.js';
import { offerStretchEnd } from './offer-windows.js';

/**
 * The latest end to which a lease that began at `leaseStart` may hold `node`, by the owner's policy (the best
 * offer covering the start that allows the project: its end, or its weekly window's, and its longest lease) and by the next booking on
 * the node (its start minus the cleaning gap). Infinity when nothing bounds it (an owner's own node, nothing
 * booked after); `leaseStart` when no offer allows it at all.
 */
export function latestEnd(node: PlanNode, leaseStart: number, ctx: AssessContext): number {
  let policy = Infinity;
  if (node.owner_project?.id !== ctx.project.id) {
    policy = leaseStart;
    for (const o of ctx.offersByNode.get(node.id) ?? []) {
      if (o.start.getTime() > leaseStart) continue;
      if (!offerAllows(o, ctx.project.id)) continue;
      const length = offerLengthCap(o, ctx.extending);
      const cap = Math.min(offerStretchEnd(o, leaseStart), length === null ? Infinity : leaseStart + length);
      policy = Math.max(policy, cap);
    }
  }
  let booked = Infinity;
  for (const h of ctx.heldByNode.get(node.id) ?? []) {
    if (h.start >= leaseStart) booked = Math.min(booked, h.start - ctx.gapMs);
  }
  return Math.min(policy, booked);
}

/** A refused extension as a sentence a lessee can act on: which node, why, and the latest end it allows. */
export function extensionRefusal(nodeName: string, end: Date, refusal: Refusal, latest: number): string {
  const until = `cannot extend to ${end.toISOString()}`;
  const latestText = Number.isFinite(latest) ? `; the latest end allowed is ${new Date(latest).toISOString()}` : '';
  switch (refusal.kind) {
    case 'unhealthy':
      return `${until}: node ${nodeName} is ${refusal.reason}`;
    case 'busy':
      return `${until}: node ${nodeName} is booked by another lease after this one${latestText}`;
    case 'policy': {
      const why = refusal.reason.startsWith('offer ') ? `its ${refusal.reason}` : refusal.reason;
      return `${until}: node ${nodeName} cannot be held that long (${why})${latestText}`;
    }
  }
}
