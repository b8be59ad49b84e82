import type { Clock } from '../domain/clock.js';
import { formatDuration } from '../domain/duration.js';
import { ConflictError, InvalidRequestError, LeaseConflictError, LeaseUnavailableError, NotFoundError, PolicyViolationError, isLeaseholdError } from '../domain/errors.js';
import { localUserId } from '../domain/identity.js';
import type { Allocation, Lease, NewAuditEvent } from '../domain/leasing.js';
import { offerCovers } from '../domain/scheduling/offer-windows.js';
import { FailureKind, LeaveReason, ReplacePolicy, equivalentRequirement, type FailureFinding, type NodeFailure } from '../domain/replacement.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { LeaseActor, LeaseService } from './lease-service.js';

/** Who changes a lease's nodes: a person (the lessee, the owner, the operator), or the engine on a failure. */
export type LifecycleActor = LeaseActor | { readonly userName: 'engine'; readonly userId: null };

/** What became of an allocation that had to leave (a failure, a request, a reclaim). */
export interface Outcome {
  readonly lease: Lease;
  /** The substitute node, or null when none was found (or the lease asked for none). */
  readonly substitute: string | null;
}

/** Substitutes tried in turn when the best one was taken by a concurrent request before the booking. */
const SUBSTITUTE_TRIES = 4;

/**
 * A lease's nodes changing while it runs (issue 16): a node replaced by an equivalent one — because it failed, its
 * lessee asked, or its owner takes it back —, a node returned early, an owner's reclaim with notice. A node that
 * leaves goes as at any end (the engine clears its lessee, takes its networks off and wipes it; access ends at the
 * instant it leaves); a substitute is planned like any group for the rest of the window (best fit, free, allowed
 * by its offer; the lease keeps its number of nodes, so no quota applies) and handed over as at a start.
 */
export class LifecycleService {
  constructor(
    private readonly store: Store,
    private readonly leasing: LeaseService,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Replaces `allocation` by an equivalent node from `at` (default now). Without a substitute the allocation stays,
   * `lease.degraded` says why (or, for a reclaim, it leaves at `at` all the same).
   */
  async replace(lease: Lease, allocation: Allocation, failure: NodeFailure, actor: LifecycleActor, at = this.clock.now()): Promise<Outcome> {
    const project = await this.store.findProject(lease.project_id);
    if (!project) throw new NotFoundError('project', lease.project_id);
    const from = new Date(Math.max(at.getTime(), lease.start.getTime(), this.clock.now().getTime()));
    if (from.getTime() >= allocation.end.getTime()) {
      throw new ConflictError(`node ${allocation.node_id} is in lease ${lease.name} only until ${allocation.end.toISOString()}: nothing left to replace`);
    }
    const where = await this.requirement(lease, allocation);
    let candidates: readonly string[] = [];
    let refusal = '';
    try {
      const plan = await this.leasing.replacementPlan(project, from, allocation.end, where);
      candidates = [...new Set([plan.allocations[0]!.node_id, ...(plan.alternatives[0] ?? [])])].slice(0, SUBSTITUTE_TRIES);
    } catch (err) {
      if (!(err instanceof LeaseUnavailableError)) throw err;
      refusal = err.message;
    }
    for (const node of candidates) {
      try {
        const updated = await this.store.lifecycle.leave(
          { allocation_id: allocation.id, node_id: node, at, reason: LeaveReason.Replaced, cleaning_gap_ms: this.leasing.cleaningGapMs },
          [this.event(lease, allocation, actor, 'lease.node_replaced', `node ${allocation.node_id} replaced by ${node}: ${failure.reason}`, { replacement: node, kind: failure.kind, reason: failure.reason, at: at.toISOString() })],
          this.clock.now(),
        );
        this.leasing.wakeEngine();
        this.logger.info({ lease_id: lease.id, node_id: allocation.node_id, replacement: node, kind: failure.kind }, 'node replaced');
        return { lease: updated, substitute: node };
      } catch (err) {
        if (!(err instanceof LeaseConflictError)) throw err;
        refusal = `node ${node} was taken meanwhile`;
      }
    }
    const why = `no equivalent node is free and allowed for the rest of the lease (${refusal || 'no candidate'})`;
    if (failure.kind === FailureKind.Reclaim) {
      const updated = await this.leave(lease, allocation, LeaveReason.Reclaimed, at, actor, 'lease.degraded', `node ${allocation.node_id} leaves the lease at ${at.toISOString()} (${failure.reason}) and ${why}`, { kind: failure.kind, reason: failure.reason });
      return { lease: updated, substitute: null };
    }
    // A withdrawn offer leaves the node working: the lease keeps it (offerWithdrawn says so), nothing failed.
    if (failure.kind === FailureKind.OfferWithdrawn) return { lease, substitute: null };
    await this.degraded(lease, allocation, failure, actor, why);
    if (failure.kind === FailureKind.Requested) {
      throw new LeaseUnavailableError(`node ${allocation.node_id} was not replaced: ${why}`, { details: { node_id: allocation.node_id } });
    }
    return { lease, substitute: null };
  }

  /** The lessee gives one node back now: it ends as at an end; the last node ends the whole lease. */
  async returnNode(lease: Lease, allocation: Allocation, actor: LeaseActor): Promise<Lease> {
    const staying = lease.allocations.filter((a) => a.id !== allocation.id && a.leave_reason === null && ['reserved', 'starting', 'active'].includes(a.state));
    if (staying.length === 0) return this.leasing.end(lease, actor);
    return this.leave(lease, allocation, LeaveReason.Returned, this.clock.now(), actor, 'lease.node_returned', `node ${allocation.node_id} given back before the lease's end`, {});
  }

  /**
   * A node of a running or upcoming lease failed (the reconciler saw it): replaced at once under `auto`, recorded
   * for the lessee under `ask` and `never` — once per kind of failure, not at every pass.
   */
  async nodeFailed(leaseId: string, allocationId: string, failure: NodeFailure): Promise<Outcome | null> {
    const lease = await this.store.leasing.getLease(leaseId);
    const allocation = lease?.allocations.find((a) => a.id === allocationId);
    if (!lease || !allocation || allocation.leave_reason !== null || !['reserved', 'starting', 'active'].includes(allocation.state)) return null;
    const engine = { userName: 'engine', userId: null } as const;
    if (lease.replace_policy !== ReplacePolicy.Auto) {
      const what = lease.replace_policy === ReplacePolicy.Ask ? 'ask for a substitute (POST …/allocations/{node}/replace)' : 'the lease asked for no substitute';
      await this.degraded(lease, allocation, failure, engine, what);
      return null;
    }
    return this.replace(lease, allocation, failure, engine);
  }

  /**
   * The owner takes `nodeId` back at `at`: every lease on it past `at` is told (`lease.reclaim_scheduled`) and gets
   * a substitute from `at`, or the node leaves it then. Allowed only where each lease was booked under an offer with
   * a reclaim notice, and `at` is at least that notice from now; otherwise PolicyViolationError naming the lease and
   * the earliest instant, and nothing changes. The node's offers end at `at`.
   */
  async reclaim(nodeId: string, nodeName: string, at: Date, actor: LeaseActor): Promise<readonly (Outcome & { readonly node_id: string })[]> {
    const now = this.clock.now();
    const held = await this.store.lifecycle.onNodeAfter(nodeId, at);
    for (const { lease, allocation } of held) {
      const offer = (await this.store.leasing.offersInForce([nodeId], allocation.start, new Date(allocation.start.getTime() + 1))).find((o) => o.withdrawn_at === null) ?? null;
      const notice = offer?.reclaim_notice_ms ?? null;
      if (notice === null) {
        throw new PolicyViolationError(
          `lease ${lease.name} holds ${nodeName} until ${allocation.end.toISOString()} under an offer without a reclaim notice: it keeps the node to its end`,
          { details: { rule: 'reclaim_notice', lease_id: lease.id, until: allocation.end.toISOString() } },
        );
      }
      const earliest = new Date(now.getTime() + notice);
      if (at.getTime() < earliest.getTime()) {
        throw new PolicyViolationError(
          `lease ${lease.name} was booked with ${formatDuration(notice)} of reclaim notice: take ${nodeName} back at ${earliest.toISOString()} or later`,
          { details: { rule: 'reclaim_notice', lease_id: lease.id, earliest_at: earliest.toISOString() } },
        );
      }
    }
    const outcomes: Array<Outcome & { readonly node_id: string }> = [];
    for (const { lease, allocation } of held) {
      const reason = `its owner takes node ${nodeName} back at ${at.toISOString()}`;
      await this.store.leasing.appendEvents([this.event(lease, allocation, actor, 'lease.reclaim_scheduled', reason, { at: at.toISOString() })], now);
      outcomes.push({ node_id: allocation.node_id, ...(await this.replace(lease, allocation, { kind: FailureKind.Reclaim, reason }, actor, at)) });
    }
    const closed = { type: 'node.reclaimed', actor: actor.userName, actor_user_id: localUserId(actor), node_id: nodeId, message: `${nodeName} leaves the pool at ${at.toISOString()}`, details: { at: at.toISOString(), leases: held.length } };
    await this.store.lifecycle.closeOffers(nodeId, at, [closed], now);
    return outcomes;
  }

  /**
   * Its owner withdrew an offer of `nodeId`: each upcoming lease on the node that no other offer still covers moves to
   * an equivalent node under `replace: auto`. Without a substitute (or under `ask`/`never`) the lease keeps the node
   * as booked — a withdrawal never takes a node from a lease made — and `lease.offer_withdrawn` tells the lessee.
   */
  async offerWithdrawn(nodeId: string, nodeName: string, actor: LeaseActor): Promise<readonly Outcome[]> {
    const now = this.clock.now();
    const outcomes: Outcome[] = [];
    for (const { lease, allocation } of await this.store.lifecycle.onNodeAfter(nodeId, now)) {
      if (allocation.start.getTime() <= now.getTime() || allocation.state !== 'reserved') continue;
      const offers = await this.store.leasing.offersInForce([nodeId], allocation.start, allocation.end);
      const covered = offers.some((o) => o.withdrawn_at === null && offerCovers(o, { start: allocation.start.getTime(), end: allocation.end.getTime() }));
      if (covered) continue;
      const reason = `its owner withdrew the offer of node ${nodeName}`;
      if (lease.replace_policy === ReplacePolicy.Auto) {
        const outcome = await this.replace(lease, allocation, { kind: FailureKind.OfferWithdrawn, reason }, actor);
        outcomes.push(outcome);
        if (outcome.substitute !== null) continue;
      }
      const kept = `${reason}; the lease keeps it as booked${lease.replace_policy === ReplacePolicy.Auto ? ' (no equivalent node is free)' : ' (POST …/allocations/{node}/replace asks for another)'}`;
      await this.store.leasing.appendEvents([this.event(lease, allocation, actor, 'lease.offer_withdrawn', kept, {})], now);
    }
    return outcomes;
  }

  /** What the reconciler found: a failed node acted on (nodeFailed), or a recorded failure that is over. */
  async onFinding(finding: FailureFinding): Promise<Outcome | null> {
    if (finding.failure) return this.nodeFailed(finding.lease_id, finding.allocation_id, finding.failure);
    const lease = await this.store.leasing.getLease(finding.lease_id);
    const allocation = lease?.allocations.find((a) => a.id === finding.allocation_id);
    if (!lease || !allocation) return null;
    const event = this.event(lease, allocation, { userName: 'engine', userId: null }, 'lease.node_recovered', `node ${allocation.node_id} serves the lease again`, {});
    await this.store.lifecycle.recordFailure(allocation.id, null, [event], this.clock.now());
    return { lease, substitute: null };
  }

  /** What a substitute must meet: the allocation's group expression, or the same facts as a named node. */
  private async requirement(lease: Lease, allocation: Allocation): Promise<string> {
    const group = lease.request.groups?.[allocation.group_index];
    if (group) return group.where;
    const node = await this.store.getNode(allocation.node_id, { kind: 'all' });
    if (!node) throw new InvalidRequestError(`node ${allocation.node_id} is no longer in the inventory: its facts are unknown, no equivalent can be named`);
    return equivalentRequirement(node.facts, node.traits);
  }

  private async leave(lease: Lease, allocation: Allocation, reason: LeaveReason, at: Date, actor: LifecycleActor, type: string, message: string, details: Record<string, unknown>): Promise<Lease> {
    const updated = await this.store.lifecycle.leave(
      { allocation_id: allocation.id, at, reason, cleaning_gap_ms: this.leasing.cleaningGapMs },
      [this.event(lease, allocation, actor, type, message, { ...details, at: at.toISOString() })],
      this.clock.now(),
    );
    this.leasing.wakeEngine();
    return updated;
  }

  private async degraded(lease: Lease, allocation: Allocation, failure: NodeFailure, actor: LifecycleActor, why: string): Promise<void> {
    const event = this.event(lease, allocation, actor, 'lease.degraded', `${failure.reason}: ${why}`, { kind: failure.kind, reason: failure.reason }, 'error');
    try {
      if (await this.store.lifecycle.recordFailure(allocation.id, failure, [event], this.clock.now())) {
        this.logger.warn({ lease_id: lease.id, node_id: allocation.node_id, kind: failure.kind }, 'lease degraded: node failed, no substitute');
      }
    } catch (err) {
      if (!isLeaseholdError(err)) throw err;
      this.logger.warn({ err, lease_id: lease.id }, 'could not record a failed node');
    }
  }

  private event(lease: Lease, allocation: Allocation, actor: LifecycleActor, type: string, message: string, details: Record<string, unknown>, outcome: 'ok' | 'error' = 'ok'): NewAuditEvent {
    return {
      type,
      outcome,
      actor: actor.userName,
      actor_user_id: actor.userId === null ? null : localUserId(actor as LeaseActor),
      lease_id: lease.id,
      node_id: allocation.node_id,
      project_id: lease.project_id,
      message,
      details: { allocation_id: allocation.id, ...details },
    };
  }
}
