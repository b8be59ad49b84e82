import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { authLimiter } from '../access/authenticate.js';
import type { EntryDeps } from '../access/entry-deps.js';
import { hashToken } from '../domain/tokens.js';
import { CloseCode, closeCodeFor, closeReason } from './close-codes.js';
import { ConsoleSession, type ConsoleSessionOptions } from './console-session.js';
import { ConsoleWatch } from './console-watch.js';

/** `/v1/consoles/{id}/stream`, possibly under the path prefix a reverse proxy publishes the server at. */
const STREAM_PATH = /^(?:\/.*)?\/v1\/consoles\/([^/]+)\/stream\/?$/;

/** Keystroke frames are small; a bigger frame is a client error (ws closes with 1009). */
const MAX_FRAME_BYTES = 64 * 1024;

export interface ConsoleProxyOptions extends ConsoleSessionOptions {
  /** Connections open at once with one console token (one URL) on this server; the next is closed with 4429. */
  readonly maxPerToken: number;
  /** Connections open at once for one user (all its console tokens) on this server; the next is closed with 4429. */
  readonly maxPerUser: number;
}

/**
 * A console URL serves one terminal (a reconnect after a drop included); a user may watch many nodes at once
 * (a cluster's bring-up). Ironic's socat serves one viewer at a time anyway: more connections only wait.
 */
const DEFAULTS: ConsoleProxyOptions = { recheckMs: 1_000, enableTimeoutMs: 60_000, pollMs: 500, maxPerToken: 4, maxPerUser: 32 };

/** Anything that emits Node's http 'upgrade' event: the server @hono/node-server creates. */
export interface UpgradeSource {
  on(event: 'upgrade', listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown;
}

/**
 * The serial console proxy: WebSocket connections on the API's own server and port (`/v1/consoles/{id}/stream?
 * token=...`), each bridged to a node's console by a ConsoleSession. Every request that upgrades is taken here;
 * the token is read from the query and used for one hashed lookup, never logged (nor is the request's URL).
 * A bad token is refused after the upgrade, with a close code a browser can read (an HTTP error would reach a
 * browser's WebSocket as a bare "error"); so is a connection over the caps per token and per user (4429). All
 * open connections are re-checked together by one ConsoleWatch: their cost while idle is one query per second.
 */
export class ConsoleProxy {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private readonly sessions = new Set<ConsoleSession>();
  private readonly options: ConsoleProxyOptions;
  private readonly watch: ConsoleWatch;
  private closing = false;

  constructor(
    private readonly deps: EntryDeps,
    options: Partial<ConsoleProxyOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.watch = new ConsoleWatch(deps, this.options.recheckMs);
  }

  /** Takes the WebSocket upgrades of `server`. */
  attach(server: UpgradeSource): void {
    server.on('upgrade', (req, socket, head) => this.handleUpgrade(req, socket, head));
  }

  /** Open console connections in this process. */
  get openConnections(): number {
    return [...this.sessions].filter((s) => !s.isClosed).length;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://upgrade.invalid');
    const match = STREAM_PATH.exec(url.pathname);
    if (!match) return refuse(socket, 404, 'Not Found');
    if (this.closing) return refuse(socket, 503, 'Service Unavailable');
    const consoleId = decodeURIComponent(match[1]!);
    const token = url.searchParams.get('token') ?? '';
    this.wss.handleUpgrade(req, socket, head, (ws) => void this.open(ws, consoleId, token, req.socket.remoteAddress ?? null));
  }

  /** Cuts this process's connections that use the console token `id` (it was just revoked). */
  closeToken(id: string): number {
    let closed = 0;
    for (const session of this.sessions) {
      if (session.tokenId !== id || session.isClosed) continue;
      session.close(CloseCode.TokenRefused, 'the console token was revoked');
      closed++;
    }
    return closed;
  }

  /** Closes every connection (1001) and waits, bounded, until their ends are recorded. Before the store closes. */
  async close(): Promise<void> {
    this.closing = true;
    const sessions = [...this.sessions];
    for (const session of sessions) session.close(CloseCode.GoingAway, 'the server is shutting down');
    this.watch.close();
    await Promise.race([Promise.all(sessions.map((s) => s.done)), new Promise((r) => setTimeout(r, 5_000).unref())]);
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  /** Why one more connection for this token and user is refused (a sentence), or null when it is within the caps. */
  private overCap(tokenId: string, userId: string): string | null {
    let withToken = 0;
    let ofUser = 0;
    for (const session of this.sessions) {
      if (session.isClosed) continue;
      if (session.tokenId === tokenId) withToken++;
      if (session.userId === userId) ofUser++;
    }
    const { maxPerToken, maxPerUser } = this.options;
    if (withToken >= maxPerToken) {
      return `too many connections: this console URL already has ${withToken} open (at most ${maxPerToken}); close one first`;
    }
    if (ofUser >= maxPerUser) return `too many console connections: you already have ${ofUser} open (at most ${maxPerUser}); close one first`;
    return null;
  }

  private async open(ws: WebSocket, consoleId: string, token: string, client: string | null): Promise<void> {
    const log = this.deps.logger.child({ console: consoleId });
    ws.on('error', (err: Error) => log.warn({ err: err.message }, 'console connection error'));
    // Keystrokes that arrive while the token is looked up are handed to the session, not dropped.
    const early: RawData[] = [];
    const keep = (data: RawData) => early.push(data);
    ws.on('message', keep);
    try {
      // The REST API's limiter on unknown tokens (api/auth.ts): a client refused there is refused here (4429).
      const limiter = authLimiter(this.deps);
      const refusal = limiter.refusal(client);
      if (refusal) {
        log.info('console refused: too many unknown tokens from this address');
        ws.close(closeCodeFor(refusal), closeReason(refusal.message));
        return;
      }
      const grant = token === '' ? null : await this.deps.store.consoles.findByHash(hashToken(token));
      if (!grant || grant.token.id !== consoleId) {
        if (token !== '') limiter.failed(client);
        log.info('console refused: unknown token');
        ws.close(CloseCode.TokenRefused, closeReason('unknown console token (or not the token of this console)'));
        return;
      }
      if (this.closing) {
        ws.close(CloseCode.GoingAway, 'the server is shutting down');
        return;
      }
      const session = new ConsoleSession(ws, grant, this.deps, this.options, this.watch, log.child({ user: grant.principal.userName }));
      // A token refused anyway (revoked, expired) is told so by the session; the caps count connections let in.
      const usable = grant.token.revoked_at === null && grant.token.expires_at.getTime() > this.deps.clock.now().getTime();
      const over = usable ? this.overCap(grant.token.id, grant.principal.userId) : null;
      if (over !== null) {
        ws.off('message', keep);
        session.close(CloseCode.TooManyConnections, over); // recorded as a refusal, like any other
        return;
      }
      ws.off('message', keep);
      for (const data of early) session.receive(data);
      this.sessions.add(session);
      ws.once('close', () => void session.done.then(() => this.sessions.delete(session)));
      await session.start(grant.token);
    } catch (err) {
      log.error({ err }, 'console open failed');
      ws.close(closeCodeFor(err), closeReason(err instanceof Error ? err.message : String(err)));
    }
  }
}

/** Answers an upgrade that is not ours (or comes during shutdown) with a plain HTTP status. */
function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
