import { randomBytes } from 'node:crypto';
import { hashToken } from '../domain/tokens.js';

/**
 * Console tokens: 256 random bits like API tokens, stored as a SHA-256 hash, but with their own prefix and table,
 * so one can never be used as the other (an `lhc_` token is unknown to the REST API's authentication).
 */
export const CONSOLE_TOKEN_PREFIX = 'lhc_';

export interface IssuedConsoleToken {
  /** The secret, returned to the caller once (inside the console's URL). */
  readonly value: string;
  readonly hash: string;
}

export function issueConsoleToken(): IssuedConsoleToken {
  const value = CONSOLE_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { value, hash: hashToken(value) };
}

/** The path of a console's WebSocket endpoint; the token travels in the query (browsers cannot set headers). */
export function consoleStreamPath(consoleId: string): string {
  return `/v1/consoles/${encodeURIComponent(consoleId)}/stream`;
}

/** `ws://` or `wss://` URL of a console from the server's public base URL (http → ws, https → wss). */
export function consoleUrl(baseUrl: string, consoleId: string, token: string): string {
  const base = new URL(baseUrl);
  base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const prefix = base.pathname.replace(/\/+$/, '');
  base.pathname = prefix + consoleStreamPath(consoleId);
  base.search = new URLSearchParams({ token }).toString();
  base.hash = '';
  return base.toString();
}
