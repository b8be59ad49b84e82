import { nextRenewal } from '../domain/scheduling/renewal-step.js';
import { formatDuration } from '../domain/duration.js';
import { ConflictError, InvalidRequestError, LeaseConflictError, LeaseUnavailableError, PolicyViolationError } from '../domain/errors.js';
import { DEFAULT_NOTICE_OFFSETS_MS } from '../domain/notices.js';
import type { ExtensionLimit, ExtensionRule } from '../domain/scheduling/extension-policy.js';
import { localUserId, type Project } from '../domain/identity.js';
import type { Lease, NewAuditEvent, Offer } from '../domain/leasing.js';
import type { Clock } from '../domain/clock.js';
import type { ReplacePolicy } from '../domain/replacement.js';
import type { NodeView } from '../domain/inventory.js';
import type { Store } from '../store/store.js';
import { LeasePlanner, type LeaseAsk, type LeasePlan } from './lease-planner.js';
import { PendingBookings, WaitForPendingBookings } from './pending-bookings.js';

export interface LeaseServiceOptions {
  /** The gap kept free after every lease for cleaning (LEASEHOLD_CLEANING_GAP). */
  readonly cleaningGapMs: number;
  /** How far ahead the earliest-start search looks (default 365 days). */
  readonly horizonMs?: number;
  /** The operator's notice offsets before a lease's end (LEASEHOLD_NOTICE_OFFSETS; default 24 h and 1 h). */
  readonly noticeOffsetsMs?: readonly number[];
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
  /** Auto-renew from the start (issue 16). */
  readonly autoRenew?: AutoRenewAsk;
}

/** What a lessee asks of auto-renew: steps of `step_ms`, never past `until`. */
export interface AutoRenewAsk {
  readonly step_ms: number;
  readonly until: Date;
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
 * Waits for bookings under way before a plan ignores them (pending-bookings.ts): each wait is for bookings that
 * began before it, so a request waits behind at most this many rounds of others before it plans on the tables alone.
 */
const PENDING_WAITS = 4;

/**
 * Leasing as the entry points use it: plan → book → re-plan on a lost race → wake the engine, extensions under the
 * same rules as a new lease, and the end of a lease. Owns the cleaning gap and the order of the quota checks (the
 * planner's for an answer, the store's under its lock for the last word). Who may do it is the caller's business
 * (the API's access decisions); what may be done is decided here.
 */
export class LeaseService {
  private readonly planner: LeasePlanner;
  readonly cleaningGapMs: number;
  /** The operator's default notice offsets (a project may have its own). */
  readonly noticeOffsetsMs: readonly number[];
  private engine: EngineWaker | null = null;
  private readonly pending = new PendingBookings();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    options: LeaseServiceOptions,
  ) {
    this.cleaningGapMs = options.cleaningGapMs;
    this.noticeOffsetsMs = options.noticeOffsetsMs ?? DEFAULT_NOTICE_OFFSETS_MS;
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

  /**
   * Names and facts of nodes by id, as Store.nodeFacts gives them: live nodes from this replica's planning index,
   * brought up to date first (one query when nothing changed, migration 0009), removed ones from the store. What an
   * offer list shows of each offer's node: reading them per page was 83 ms of a 10,000-offer list on PostgreSQL and
   * 150 ms on PGlite (their facts as jsonb, parsed in Node).
   */
  async nodeFacts(ids: readonly string[]): Promise<ReadonlyMap<string, Pick<NodeView, 'name' | 'facts'>>> {
    await this.planner.index.refresh();
    const found = new Map<string, Pick<NodeView, 'name' | 'facts'>>();
    const removed: string[] = [];
    for (const id of new Set(ids)) {
      const node = this.planner.index.get(id);
      if (node) found.set(id, { name: node.name, facts: node.facts });
      else removed.push(id);
    }
    if (removed.length > 0) for (const [id, node] of await this.store.nodeFacts(removed)) found.set(id, node);
    return found;
  }

  /** What `ask` would get now, changing nothing (the same checks as create). */
  quote(project: Project, ask: LeaseAsk): Promise<LeasePlan> {
    return this.planner.plan(project, ask);
  }

  /**
   * Books `ask` for `project`, all or nothing. A node taken between plan and insert is replaced by the next best or
   * planned around (CONFLICT_RETRIES); a request that needs nodes another booking of this process is taking waits for
   * it to end and plans again (PENDING_WAITS).
   */
  async create(project: Project, ask: LeaseAsk, meta: NewLeaseMeta): Promise<Lease> {
    let waits = 0;
    for (let attempt = 1; ; attempt++) {
      let plan: LeasePlan;
      try {
        plan = await this.planner.plan(project, ask, waits < PENDING_WAITS ? this.pending : undefined);
      } catch (err) {
        if (!(err instanceof WaitForPendingBookings)) throw err;
        waits++;
        attempt--;
        await err.settled;
        continue;
      }
      try {
        return await this.book(project, ask, meta, plan);
      } catch (err) {
        if (!(err instanceof LeaseConflictError) || attempt >= CONFLICT_RETRIES) throw err;
        if (err.details?.locked_by_others === true) await pause(LOCKED_PAUSE_MS * attempt);
      } finally {
        plan.hold?.release();
      }
    }
  }

  /** One booking of a plan: the lease, or LeaseConflictError when its nodes and their alternatives were taken. */
  private async book(project: Project, ask: LeaseAsk, meta: NewLeaseMeta, plan: LeasePlan): Promise<Lease> {
    // Refused before anything is booked: a request that fails validation changes nothing.
    if (meta.autoRenew && meta.autoRenew.until.getTime() <= plan.end.getTime()) {
      throw new InvalidRequestError(`auto_renew.until must be after the lease's end (${plan.end.toISOString()})`, { details: { field: 'auto_renew.until' } });
    }
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
    return meta.autoRenew ? await this.setAutoRenew(lease, meta.autoRenew, meta.actor) : lease;
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

  /** How far `lease` could be extended now, and what limits it (GET /v1/leases/{id}/extension). */
  extensionLimit(project: Project, lease: Lease): Promise<{ readonly limit: ExtensionLimit; readonly offers: readonly Offer[] }> {
    return this.planner.extensionLimit(project, lease);
  }

  /** Turns the lease's auto-renew on (again, whatever stopped it) or, with null, off. */
  async setAutoRenew(lease: Lease, renew: AutoRenewAsk | null, actor: LeaseActor): Promise<Lease> {
    if (renew && renew.until.getTime() <= lease.end.getTime()) {
      throw new InvalidRequestError(`auto_renew.until must be after the lease's end (${lease.end.toISOString()})`, { details: { field: 'auto_renew.until' } });
    }
    const event: NewAuditEvent = {
      type: 'lease.auto_renew_changed',
      ...this.by(actor),
      lease_id: lease.id,
      project_id: lease.project_id,
      message: renew ? `renewed by ${formatDuration(renew.step_ms)} at a time until ${renew.until.toISOString()}` : 'auto-renew off',
      details: renew ? { step: formatDuration(renew.step_ms), until: renew.until.toISOString() } : { off: true },
    };
    const updated = await this.store.notices.setAutoRenew(lease.id, renew, [event], this.clock.now());
    this.engine?.wake();
    return updated;
  }

  /**
   * One auto-renew step of a lease, when due (engine/lease-timekeeper.ts): the lease is extended under the same
   * rules as a lessee's own extension (`lease.renewed`), or auto-renew ends — `done` at the lessee's limit, or
   * `stopped` with `lease.renewal_failed` naming the rule that refused it (once: the store checks it is still on
   * and the end unchanged). A race lost to another engine or to the lessee changes nothing here.
   */
  async renewDue(leaseId: string): Promise<'renewed' | 'done' | 'stopped' | 'waiting' | 'skipped'> {
    const lease = await this.store.leasing.getLease(leaseId);
    if (!lease?.auto_renew || lease.auto_renew.state !== 'on') return 'skipped';
    const project = await this.store.findProject(lease.project_id);
    if (!project) return 'skipped';
    const now = this.clock.now();
    const { limit } = await this.planner.extensionLimit(project, lease);
    const decision = nextRenewal(lease, lease.auto_renew, limit, now);
    const base = { actor: 'engine', lease_id: lease.id, project_id: lease.project_id } as const;
    if (decision.kind === 'wait') return 'waiting';
    if (decision.kind === 'done') {
      const message = `auto-renew reached its limit (${lease.auto_renew.until.toISOString()})`;
      const done = await this.store.notices.finishAutoRenew(lease.id, lease.end, { state: 'done', rule: null, message }, [{ ...base, type: 'lease.auto_renew_done', message }], now);
      return done ? 'done' : 'skipped';
    }
    if (decision.kind === 'stop') return this.stopRenewal(lease, decision.rule ?? 'next_booking', `cannot renew past ${lease.end.toISOString()}: ${ruleSentence(decision.rule)}`, now);
    try {
      await this.planner.checkExtension(project, lease, decision.end);
      await this.store.leasing.changeLeaseEnd(
        lease.id,
        decision.end,
        this.cleaningGapMs,
        [{ ...base, type: 'lease.renewed', message: `renewed until ${decision.end.toISOString()}`, details: { from: lease.end.toISOString(), to: decision.end.toISOString(), step: formatDuration(lease.auto_renew.step_ms), until: lease.auto_renew.until.toISOString() } }],
        now,
        project.quota.max_nodes ?? null,
        project.quota.max_node_hours ?? null,
        lease.end,
      );
      this.engine?.wake();
      return 'renewed';
    } catch (err) {
      if (err instanceof ConflictError) return 'skipped';
      if (err instanceof PolicyViolationError || err instanceof LeaseConflictError || err instanceof LeaseUnavailableError) {
        const rule = typeof err.details?.rule === 'string' ? err.details.rule : err instanceof PolicyViolationError ? 'policy' : err instanceof LeaseConflictError ? 'next_booking' : 'node_unavailable';
        return this.stopRenewal(lease, rule, err.message, now);
      }
      throw err;
    }
  }

  private async stopRenewal(lease: Lease, rule: string, message: string, now: Date): Promise<'stopped' | 'skipped'> {
    const event: NewAuditEvent = { actor: 'engine', lease_id: lease.id, project_id: lease.project_id, type: 'lease.renewal_failed', outcome: 'error', message, details: { rule, end: lease.end.toISOString() } };
    return (await this.store.notices.finishAutoRenew(lease.id, lease.end, { state: 'stopped', rule, message }, [event], now)) ? 'stopped' : 'skipped';
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

/** Why no renewal is possible, for the lessee's warning. */
function ruleSentence(rule: ExtensionRule | null): string {
  switch (rule) {
    case 'extension_window':
      return "the offer's extension window is not open (extension_window)";
    case 'extension_max_ahead':
      return 'the offer allows no extension that far ahead of now (extension_max_ahead)';
    case 'max_total_length':
      return "the lease reached the offer's total limit (max_total_length)";
    case 'max_lease_length':
      return "the lease reached the offer's longest lease (max_lease_length)";
    case 'offer_end':
      return 'an offer of its nodes ends there (offer_end)';
    case 'offer_window':
      return "the weekly window of an offer of its nodes ends there (offer_window)";
    case 'next_booking':
      return 'another lease is booked on one of its nodes right after (next_booking)';
    case 'project_max_lease_duration':
      return "the lease reached the project's quota on a lease's length (project_max_lease_duration)";
    default:
      return 'no rule allows it';
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
