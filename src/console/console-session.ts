import type { Duplex } from 'node:stream';
import { WebSocket, type RawData } from 'ws';
import type { EntryDeps } from '../access/entry-deps.js';
import { nodeActionGuard } from '../access/node-action-guard.js';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../domain/errors.js';
import { type Principal, localUserId } from '../domain/identity.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import type { Logger } from '../logger.js';
import type { ConsoleAccessState, ConsoleGrant, ConsoleToken } from '../store/console-store.js';
import { CloseCode, closeCodeFor, closeReason } from './close-codes.js';
import { consoleAccess, consoleStanding, type ConsoleStanding } from './console-access.js';
import type { ConsoleWatch, WatchedConsole } from './console-watch.js';
import { openConsole } from './open-console.js';

export interface ConsoleSessionOptions {
  /**
   * How often the open connections re-read their tokens and the lease table (revocations and leases shortened or
   * cancelled on another replica), all of a process's connections in one query (console-watch.ts). ≤ 2 s.
   */
  readonly recheckMs: number;
  /** How long to wait for a console that had to be turned on (Ironic's socat console: 10–16 s). */
  readonly enableTimeoutMs: number;
  /** How often to ask the driver while waiting for it. */
  readonly pollMs: number;
}

/** Keystrokes typed while the console is still being turned on are kept (up to this much) and sent once it is up. */
const MAX_PENDING_INPUT = 64 * 1024;
/** Output queued for a slow client beyond this pauses the console stream until the client catches up. */
const HIGH_WATER_BYTES = 1024 * 1024;
/** A client that does not answer the closing handshake is cut off after this (network time, not lease time). */
const CLOSE_GRACE_MS = 5_000;

type State = 'opening' | 'open' | 'closed';

/**
 * One WebSocket connection to one node's serial console. The token was found by the proxy; this checks that it
 * is still good, decides access from the lease table (console-access.ts), turns the console on if needed, and
 * bridges bytes both ways; the turn-on is admitted by the user's access before every attempt, so it never reaches
 * the node after the lease. While open, the process's ConsoleWatch guards access: a re-check at the end of the
 * lease that grants it (on the injected clock) and every `recheckMs` for revoked tokens and leases shortened or
 * cancelled, for all connections in one query. Whatever ends it — client, guard, the node's console, shutdown —
 * ends it once, with a close code (close-codes.ts) and an audit event. The token's value is never logged: the
 * proxy never hands it over.
 */
export class ConsoleSession implements WatchedConsole {
  readonly tokenId: string;
  readonly nodeId: string;
  readonly userId: string;
  private principal: Principal;
  private state: State = 'opening';
  private stream: Duplex | null = null;
  private pendingInput: Buffer[] = [];
  private pendingBytes = 0;
  private endAt: number | null = null;
  private readonly abort = new AbortController();
  private connectedAt: Date | null = null;
  private nodeName: string;
  private ownerProjectId: string | null = null;
  private leaseId: string | null = null;
  private bytesToClient = 0;
  private bytesFromClient = 0;
  private recorded: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: WebSocket,
    grant: ConsoleGrant,
    private readonly deps: EntryDeps,
    private readonly options: ConsoleSessionOptions,
    private readonly watch: ConsoleWatch,
    private readonly log: Logger,
  ) {
    this.tokenId = grant.token.id;
    this.nodeId = grant.token.node_id;
    this.userId = grant.principal.userId;
    this.nodeName = grant.token.node_id;
    this.principal = grant.principal;
    ws.on('message', (data: RawData) => this.receive(data));
    ws.on('close', (code: number, reason: Buffer) => this.closedByClient(code, reason.toString('utf8')));
    // Protocol errors (a frame too big, bad UTF-8): ws closes the socket itself and 'close' follows.
    ws.on('error', (err: Error) => this.log.warn({ err: err.message }, 'console connection error'));
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /** The end of the lease this connection's access follows (ms), for the watch. */
  get followedEnd(): number | null {
    return this.endAt;
  }

  /** Settles once the end of the session is in the audit log (shutdown waits for it before closing the store). */
  get done(): Promise<void> {
    return this.recorded;
  }

  /** Opens the console for `token` (already looked up by the proxy) and bridges it; returns once bridged or refused. */
  async start(token: ConsoleToken): Promise<void> {
    try {
      this.checkToken(token);
      const access = await consoleAccess(this.deps, this.principal, this.nodeId);
      if (this.isClosed) return;
      this.nodeName = access.node.name ?? access.node.id;
      this.follow({ access: access.access, subject: access.subject, lease: access.lease, ownerProjectId: access.node.owner_project?.id ?? null });
      this.watch.add(this);
      this.connectedAt = this.deps.clock.now();
      this.record([this.event('console.connected', { details: { as: access.access } })]);
      this.log.info({ node: this.nodeId, as: access.access }, 'console connected');
      const stream = await openConsole(this.deps.driver, this.nodeId, {
        clock: this.deps.clock,
        timeoutMs: this.options.enableTimeoutMs,
        pollMs: this.options.pollMs,
        mayEnable: access.mayEnable,
        signal: this.abort.signal,
        onEnabling: () => this.notice(`the serial console of ${this.nodeName} is off: turning it on (Ironic can take 15 s or more)...`),
        // Turning the console on can take 10-16 s and meet a locked node: every attempt asks the lease table again.
        guard: nodeActionGuard(this.deps, this.principal, this.nodeId, access, {
          allows: (subject) => this.deps.policy.allows('baremetal:node:get_console', subject),
          refusal: () => new ForbiddenError('the policy (baremetal:node:get_console) no longer allows you to use the serial console'),
        }),
      });
      if (this.isClosed) {
        stream.destroy();
        return;
      }
      this.bridge(stream);
      this.deps.inventory.refreshNode(this.nodeId).catch(() => undefined); // shows console_enabled at once
    } catch (err) {
      if (this.isClosed) return; // the guard, the client or a shutdown ended it meanwhile
      // Access ended while the console was being turned on: the same 4410 as for an open connection.
      if (err instanceof NotFoundError && this.connectedAt !== null) return this.accessEnded(this.deps.clock.now());
      if (closeCodeFor(err) === CloseCode.Internal) this.log.error({ err }, 'console failed');
      this.close(closeCodeFor(err), err instanceof Error ? err.message : String(err));
    }
  }

  /** Ends the connection from the server's side (idempotent). */
  close(code: number, reason: string): void {
    if (this.isClosed) return;
    this.teardown();
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.close(code, closeReason(reason));
      const cutOff = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
      cutOff.unref();
      this.ws.once('close', () => clearTimeout(cutOff));
    }
    this.ended(code, reason, 'server');
  }

  private checkToken(token: ConsoleToken): void {
    if (token.revoked_at !== null) throw new UnauthenticatedError(`the console token was revoked at ${token.revoked_at.toISOString()}`);
    if (token.expires_at.getTime() <= this.deps.clock.now().getTime()) {
      throw new UnauthenticatedError(`the console token expired at ${token.expires_at.toISOString()}; ask for a new one`);
    }
  }

  private bridge(stream: Duplex): void {
    this.stream = stream;
    this.state = 'open';
    stream.on('data', (chunk: Buffer) => {
      this.bytesToClient += chunk.length;
      this.ws.send(chunk, { binary: true }, () => {
        if (stream.isPaused() && this.ws.bufferedAmount < HIGH_WATER_BYTES / 4) stream.resume();
      });
      if (this.ws.bufferedAmount > HIGH_WATER_BYTES) stream.pause();
    });
    stream.on('error', (err: Error) => this.log.warn({ err: err.message, node: this.nodeId }, 'console stream error'));
    stream.once('end', () => void this.streamEnded());
    stream.once('close', () => void this.streamEnded());
    for (const bytes of this.pendingInput) stream.write(bytes);
    this.pendingInput = [];
    this.pendingBytes = 0;
  }

  /** Bytes from the client for the serial line (kept while the console is being turned on). */
  receive(data: RawData): void {
    if (this.isClosed) return;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    this.bytesFromClient += bytes.length;
    if (this.stream) {
      this.stream.write(bytes);
    } else if (this.pendingBytes + bytes.length <= MAX_PENDING_INPUT) {
      this.pendingInput.push(bytes);
      this.pendingBytes += bytes.length;
    }
  }

  /** Leasehold's own messages travel as text frames, so a client can tell them from the node's bytes. */
  private notice(text: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(`[leasehold] ${text}\r\n`);
  }

  /** The node's side closed the stream; if access ended at the same moment (the engine turns the console off at
   * the end of a lease), that is the reason to give. */
  private async streamEnded(): Promise<void> {
    if (this.isClosed) return;
    await this.watch.check();
    this.close(CloseCode.ConsoleClosed, `the serial console of ${this.nodeName} closed the connection`);
  }

  /** Follows the lease that grants access: the watch re-checks at its end (again when the end moved). */
  private follow(standing: ConsoleStanding): void {
    this.ownerProjectId = standing.ownerProjectId;
    // Owners and operators keep access past a lease of theirs, but the policy may grant the console only through
    // the lease: either way the end just asks for a re-check at that instant.
    const lease = standing.subject.is_node_lessee ? standing.lease : null;
    this.leaseId = lease?.lease_id ?? null;
    this.endAt = lease ? lease.end.getTime() : null;
    // One that fired a hair early (timers are not exact) is armed again; an unchanged one is kept.
    if (this.endAt !== null) this.watch.wakeAt(this.endAt);
  }

  /** The watch's re-check: the token (revoked?) and access decided again from the lease table, at `now`. */
  recheck(state: ConsoleAccessState | null, now: Date): void {
    if (this.isClosed) return;
    if (state === null || state.grant.token.revoked_at !== null) return this.close(CloseCode.TokenRefused, 'the console token was revoked');
    this.principal = state.grant.principal;
    const standing = consoleStanding(this.deps.policy, state);
    if (standing === null) return this.accessEnded(now);
    this.follow(standing);
  }

  /**
   * Access could not be confirmed (database unreachable). Past the known end of the lease that is the end; before
   * it the connection stays and the next check (or the one at the end) decides.
   */
  recheckFailed(now: Date): void {
    if (this.isClosed) return;
    if (this.endAt !== null && now.getTime() >= this.endAt) this.accessEnded(now);
  }

  private accessEnded(now: Date): void {
    const atEnd = this.endAt !== null && now.getTime() >= this.endAt;
    if (atEnd) this.log.info({ node: this.nodeId, late_ms: now.getTime() - this.endAt! }, 'console cut at the end of the lease');
    this.close(
      CloseCode.AccessEnded,
      atEnd
        ? `the lease ended at ${new Date(this.endAt!).toISOString()}`
        : 'access to the node ended (the lease ended, was shortened or cancelled, or the policy changed)',
    );
  }

  private closedByClient(code: number, reason: string): void {
    if (this.isClosed) return;
    this.teardown();
    this.ended(code, reason, 'client');
  }

  private teardown(): void {
    this.state = 'closed';
    this.abort.abort(new Error('console closed'));
    this.watch.delete(this);
    this.stream?.destroy();
    this.pendingInput = [];
  }

  /** The audit record of how it ended: a refusal when it never got access, a disconnection otherwise. */
  private ended(code: number, reason: string, by: 'client' | 'server'): void {
    const details = { code, reason, by };
    if (this.connectedAt === null) {
      this.log.info({ node: this.nodeId, code, reason }, 'console refused');
      this.record([this.event('console.refused', { outcome: 'error', message: reason, details })]);
      return;
    }
    const seconds = (this.deps.clock.now().getTime() - this.connectedAt.getTime()) / 1000;
    this.log.info({ node: this.nodeId, code, reason, by, seconds, bytes_out: this.bytesToClient, bytes_in: this.bytesFromClient }, 'console closed');
    this.record([
      this.event('console.disconnected', {
        message: reason,
        details: { ...details, seconds, bytes_to_client: this.bytesToClient, bytes_from_client: this.bytesFromClient },
      }),
    ]);
  }

  private event(type: string, extra: Partial<NewAuditEvent>): NewAuditEvent {
    return {
      type,
      actor: this.principal.userName,
      actor_user_id: localUserId(this.principal),
      node_id: this.nodeId,
      project_id: this.principal.projectId,
      owner_project_id: this.ownerProjectId,
      lease_id: this.leaseId,
      ...extra,
      details: { console_id: this.tokenId, ...extra.details },
    };
  }

  private record(events: NewAuditEvent[]): void {
    const write = this.deps.store.leasing.appendEvents(events, this.deps.clock.now());
    this.recorded = Promise.all([this.recorded, write]).then(
      () => undefined,
      (err: unknown) => this.log.warn({ err }, 'could not record a console event'),
    );
  }
}
