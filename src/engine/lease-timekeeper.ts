import type { Clock, Timer } from '../domain/clock.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';

/** Runs one auto-renew step of a lease when due (LeaseService.renewDue). */
export interface Renewer {
  renewDue(leaseId: string): Promise<'renewed' | 'done' | 'stopped' | 'waiting' | 'skipped'>;
}

export interface LeaseTimekeeperOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Null until the leasing side is wired (start-server.ts wires it before the server listens). */
  readonly renewer: () => Renewer | null;
  /** The operator's notice offsets (LEASEHOLD_NOTICE_OFFSETS). */
  readonly noticeOffsetsMs: readonly number[];
  /** How often it looks for due renewals and notices. Default 5 s: a notice goes out at most this late. */
  readonly pollMs?: number;
}

/** Renewals looked at per pass at most (the rest on the next pass, soonest end first). */
const RENEWALS_PER_PASS = 200;

/**
 * The lease timekeeper (issue 16, items 3 and 4): what a lease's clock asks of the worker besides its start and
 * end tasks. Each pass first renews the leases whose auto-renew is due (so a notice goes out for the renewed end,
 * not the old one), then sends the notices due before their end. Both are safe with any number of replicas: a
 * renewal is made only from the end it was computed from, a notice's row is keyed by lease, offset and end.
 */
export class LeaseTimekeeper {
  private timer: Timer | null = null;
  private running: Promise<{ renewed: number; notices: number }> | null = null;
  private stopped = true;
  private readonly pollMs: number;
  private readonly log: Logger;

  constructor(private readonly options: LeaseTimekeeperOptions) {
    this.pollMs = options.pollMs ?? 5_000;
    this.log = options.logger.child({ component: 'lease-timekeeper' });
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running?.catch(() => undefined);
  }

  /** One pass now (after a lease's end or auto-renew changed in this process). */
  wake(): void {
    if (this.stopped) return;
    this.timer?.cancel();
    this.schedule(0);
  }

  /** One pass: due renewals, then due notices. Concurrent calls share the pass in progress. */
  runOnce(): Promise<{ renewed: number; notices: number }> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<{ renewed: number; notices: number }> {
    const { store, clock } = this.options;
    let renewed = 0;
    const renewer = this.options.renewer();
    if (renewer) {
      for (const id of await store.notices.dueRenewals(clock.now(), RENEWALS_PER_PASS)) {
        try {
          const outcome = await renewer.renewDue(id);
          if (outcome === 'renewed') renewed++;
          if (outcome !== 'waiting' && outcome !== 'skipped') this.log.info({ lease_id: id, outcome }, 'auto-renew');
        } catch (err) {
          // One lease's failure (the store, a bug) never holds up the others; it is tried again next pass.
          this.log.warn({ lease_id: id, error: err instanceof Error ? err.message : String(err) }, 'auto-renew step failed; trying again later');
        }
      }
    }
    const notices = await store.notices.sendDueNotices(clock.now(), this.options.noticeOffsetsMs);
    if (notices > 0) this.log.info({ notices }, 'sent notices before lease ends');
    return { renewed, notices };
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimer(delayMs, () => {
      this.timer = null;
      this.runOnce()
        .catch((err: unknown) => this.log.error({ err }, 'lease timekeeper pass failed'))
        .finally(() => {
          if (!this.timer) this.schedule(this.pollMs);
        });
    });
  }
}
