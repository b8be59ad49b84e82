import { LeaseConflictError } from '../domain/errors.js';
import { localUserId, type Project } from '../domain/identity.js';
import type { Lease, NewAuditEvent } from '../domain/leasing.js';
import type { Clock } from '../domain/clock.js';
import type { ReplacePolicy } from '../domain/replacement.js';
import type { Store } from '../store/store.js';
import { LeasePlanner, type LeaseAsk, type LeasePlan } from './lease-planner.js';

export interface LeaseServiceOptions {
  /** The gap kept free after every lease for cleaning (LEASEHOLD_CLEANING_GAP). */
  readonly cleaningGapMs: number;
  /** How far ahead the earliest-start search looks (default 365 days). */
  readonly horizonMs?: number;
}

/** Who asks for a change, for the audit log (a Keystone user has no local id: `source` says so). */
export interface LeaseActor {
  readonly userName: string;
  readonly userId: string;
  readonly source?: 'keystone';
}

/** What a lease is booked with, beyond what it asks for. */
export interface NewLeaseMeta {
  readonly name?: string;
  readonly actor: LeaseActor;
  /** What to do when one of its nodes fails (default auto). */
  readonly replace?: ReplacePolicy;
}

/** The lease engine, woken after a change in this process so it re-arms its timer at once. */
export interface EngineWaker {
  wake(): void;
}

/**
 * A booking that finds its nodes and their alternatives taken plans again, against what the winners booked: the
 * request is refused (lease_unavailable, saying what is leased) only when the capacity is not there. Every lost
 * attempt means another booking made progress, so this bounds the work, not the outcome of a fair race.
 */
const CONFLICT_RETRIES = 12;
/** Before planning again after nodes were skipped as locked by another booking: let that one commit or fail. */
const LOCKED_PAUSE_MS = 3;

/**
 * Leasing as the entry points use it: plan → book → re-plan on a lost race → wake the engine, extensions under the
 * same rules as a new lease, and the end of a lease. Owns the cleaning gap and the order of the quota checks (the
 * planner's for an answer, the store's under its lock for the last word). Who may do it is the caller's business
 * (the API's access decisions); what may be done is decided here.
 */
export class LeaseService {
  private readonly planner: LeasePlanner;
  readonly cleaningGapMs: number;
  private engine: EngineWaker | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    options: LeaseServiceOptions,
  ) {
    this.cleaningGapMs = options.cleaningGapMs;
    this.planner = new LeasePlanner(store, clock, options);
  }

  /** The engine of this process (role worker or all), woken after each change. */
  attachEngine(engine: EngineWaker | null): void {
    this.engine = engine;
  }

  /** Wakes this process's engine (after a change it must act on: a node replaced, returned, reclaimed). */
  wakeEngine(): void {
    this.engine?.wake();
  }

  /**
   * A substitute for one allocation: one node meeting `where`, free and allowed over [start, end), best fit first,
   * with the alternatives behind it. No quota: a replacement does not add to what the project holds.
   */
  replacementPlan(project: Project, start: Date, end: Date, where: string): Promise<LeasePlan> {
    return this.planner.plan({ ...project, quota: {} }, { start, end, groups: [{ count: 1, where }] });
  }

  /** What `ask` would get now, changing nothing (the same checks as create). */
  quote(project: Project, ask: LeaseAsk): Promise<LeasePlan> {
    return this.planner.plan(project, ask);
  }

  /** Books `ask` for `project`, all or nothing; a node taken between plan and insert is planned around, up to 3 times. */
  async create(project: Project, ask: LeaseAsk, meta: NewLeaseMeta): Promise<Lease> {
    for (let attempt = 1; ; attempt++) {
      const plan = await this.planner.plan(project, ask);
      try {
        const lease = await this.store.leasing.createLease(
          {
            name: meta.name ?? `lease-${plan.start.toISOString().slice(0, 16)}`,
            project_id: project.id,
            created_by: localUserId(meta.actor),
            start: plan.start,
            end: plan.end,
            request: { nodes: ask.nodes, groups: ask.groups },
            allocations: plan.allocations,
            alternatives: plan.alternatives,
            cleaning_gap_ms: this.cleaningGapMs,
            max_nodes: project.quota.max_nodes ?? null,
            max_node_hours: project.quota.max_node_hours ?? null,
            replace_policy: meta.replace,
          },
          [{ type: 'lease.created', ...this.by(meta.actor), project_id: project.id, message: `${plan.allocations.length} nodes` }],
          this.clock.now(),
        );
        this.engine?.wake();
        return lease;
      } catch (err) {
        if (!(err instanceof LeaseConflictError) || attempt >= CONFLICT_RETRIES) throw err;
        if (err.details?.locked_by_others === true) await pause(LOCKED_PAUSE_MS * attempt);
      }
    }
  }

  /**
   * Moves a lease's end. An extension is a request for the extra time on the same nodes under the same rules as a
   * new lease (offers, their policy, the quota, the next lease), checked again under the store's lock.
   */
  async changeEnd(project: Project, lease: Lease, end: Date, actor: LeaseActor): Promise<Lease> {
    const extending = end.getTime() > lease.end.getTime();
    if (extending) await this.planner.checkExtension(project, lease, end);
    const event: NewAuditEvent = {
      type: extending ? 'lease.extended' : 'lease.shortened',
      ...this.by(actor),
      lease_id: lease.id,
      project_id: lease.project_id,
      details: { from: lease.end.toISOString(), to: end.toISOString() },
    };
    const updated = await this.store.leasing.changeLeaseEnd(
      lease.id,
      end,
      this.cleaningGapMs,
      [event],
      this.clock.now(),
      extending ? (project.quota.max_nodes ?? null) : null,
      extending ? (project.quota.max_node_hours ?? null) : null,
    );
    this.engine?.wake();
    return updated;
  }

  /** What the lease wants done when one of its nodes fails. */
  async setReplacePolicy(lease: Lease, policy: ReplacePolicy, actor: LeaseActor): Promise<Lease> {
    const event: NewAuditEvent = {
      type: 'lease.replace_policy_changed',
      ...this.by(actor),
      lease_id: lease.id,
      project_id: lease.project_id,
      message: `on a failed node: ${policy}`,
      details: { from: lease.replace_policy, to: policy },
    };
    return this.store.lifecycle.setReplacePolicy(lease.id, policy, [event], this.clock.now());
  }

  /** Cancels a lease that has not started, or ends a running one now. */
  async end(lease: Lease, actor: LeaseActor): Promise<Lease> {
    const now = this.clock.now();
    const event = { ...this.by(actor), lease_id: lease.id, project_id: lease.project_id };
    const updated =
      // One that starts this very instant has had no time at all: cancelled (ending it at its start would leave
      // it an empty window, which the store refuses).
      lease.start.getTime() >= now.getTime() && lease.state === 'pending'
        ? await this.store.leasing.cancelLease(lease.id, [{ ...event, type: 'lease.cancelled' }], now)
        : await this.store.leasing.changeLeaseEnd(lease.id, now, this.cleaningGapMs, [{ ...event, type: 'lease.ended_early' }], now);
    this.engine?.wake();
    return updated;
  }

  private by(actor: LeaseActor): Pick<NewAuditEvent, 'actor' | 'actor_user_id'> {
    return { actor: actor.userName, actor_user_id: localUserId(actor) };
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
