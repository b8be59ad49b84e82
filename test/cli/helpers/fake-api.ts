import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  /** Path with the query string, as sent. */
  readonly url: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  /** Sent as-is instead of JSON (to imitate a proxy's HTML error page). */
  readonly raw?: string;
}

type Handler = (request: RecordedRequest) => Reply;

/**
 * A stand-in for the Leasehold server: answers canned, contract-shaped JSON per "METHOD /path" and records every
 * request, so tests assert exactly what the CLI sent. Unknown routes get the API's 404 error shape.
 */
export class FakeApi {
  readonly requests: RecordedRequest[] = [];
  private readonly routes = new Map<string, Handler>();
  private server: Server | undefined;
  url = '';

  on(method: string, path: string, reply: Reply | Handler): this {
    this.routes.set(`${method} ${path}`, typeof reply === 'function' ? reply : () => reply);
    return this;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const parsed = new URL(req.url ?? '/', 'http://fake');
        const request: RecordedRequest = {
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          path: parsed.pathname,
          query: Object.fromEntries(parsed.searchParams),
          headers: req.headers,
          body: text === '' ? undefined : JSON.parse(text),
        };
        this.requests.push(request);
        const handler = this.routes.get(`${request.method} ${request.path}`);
        const reply: Reply = handler
          ? handler(request)
          : { status: 404, body: { error: { code: 'not_found', message: `no route ${request.method} ${request.path}`, details: {} } } };
        if (reply.raw !== undefined) {
          res.writeHead(reply.status, { 'content-type': 'text/html' }).end(reply.raw);
        } else if (reply.body === undefined) {
          res.writeHead(reply.status).end();
        } else {
          res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The one request the test expects; fails loudly when there were more or fewer. */
  only(): RecordedRequest {
    if (this.requests.length !== 1) {
      throw new Error(`expected 1 request, got ${this.requests.length}: ${this.requests.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    }
    return this.requests[0] as RecordedRequest;
  }
}

/** The API's error body. */
export function apiError(status: number, code: string, message: string, details: Record<string, unknown> = {}): Reply {
  return { status, body: { error: { code, message, details } } };
}
