import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** One backend's answer, read to the end. */
export interface Exchanged {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

// Connections kept open between calls (the engine and the gateway call Ironic back to back).
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * One HTTP request to a backend over Node's own client with a keep-alive pool, answered with its status, body
 * text and headers. What `fetch` did for the Ironic client, at less cost per call: measured against a real Ironic
 * (node GET, one caller), 0.2–0.3 ms less than fetch's (undici's) request, stream and Response objects, on a
 * gateway call whose whole overhead is ≈ 1.5 ms (issue 15).
 *
 * As fetch did: `signal` aborts it (rejecting with the signal's reason), a redirect is refused (rejected: a
 * backend never redirects its API, and credentials must not follow one), and a failed connection rejects with the
 * socket's error (its `code`, e.g. ECONNREFUSED).
 */
export function exchange(
  url: string,
  options: { readonly method: string; readonly headers: Readonly<Record<string, string>>; readonly body?: string; readonly signal: AbortSignal },
): Promise<Exchanged> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(options.body));
    const send = secure ? httpsRequest : httpRequest;
    const req = send(target, { method: options.method, headers, agent: secure ? agents.https : agents.http, signal: options.signal }, (res) => {
      if (res.statusCode !== undefined && res.statusCode >= 300 && res.statusCode < 400) {
        res.resume();
        reject(new Error(`redirect refused (${res.statusCode} to ${res.headers.location ?? 'nowhere'})`));
        return;
      }
      readAll(res).then((text) => {
        try {
          resolve({ status: res.statusCode ?? 0, text, headers: headersOf(res) });
        } catch (err) {
          reject(err); // a header the Headers class refuses: the answer is not usable
        }
      }, reject);
    });
    // `on`, not `once`: a second error after the first (or after the answer) must find a listener, not crash.
    req.on('error', (err) => reject(options.signal.aborted ? options.signal.reason : err));
    req.end(options.body);
  });
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.once('aborted', () => reject(new Error('the answer was cut off')));
  });
}

function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}
