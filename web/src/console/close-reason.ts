// What a console's WebSocket close means, in words (close codes: src/console/close-codes.ts and the README's
// "Serial console" table). The server's reason is a sentence too (e.g. "the lease ended at 2030-…"): both shown.

const MEANINGS: Readonly<Record<number, string>> = {
  1000: 'Console closed',
  1001: 'The Leasehold server is shutting down',
  1006: 'The connection was lost (network or server gone)',
  1009: 'A message was too large for the console (over 64 KiB)',
  1011: 'The console failed unexpectedly (the server log has the details)',
  4401: 'The console link was refused: unknown, expired or revoked',
  4403: 'You are not permitted to use this console',
  4404: 'This node is not reachable for you now (no active lease on it)',
  4409: 'The console cannot be used in its current state',
  4410: 'Access ended with the lease',
  4429: 'Too many console connections, or too many refused tokens, for now',
  4502: "The node's console closed the connection",
  4503: 'The console could not be reached or did not come up in time',
};

export interface CloseInfo {
  code: number;
  reason: string;
  /** Closed by this page (the Detach button): not news. */
  byUs?: boolean;
}

/** One sentence for the console's status line, e.g. "Access ended with the lease: the lease ended at … (4410)". */
export function closeReasonText({ code, reason, byUs }: CloseInfo): string {
  if (byUs && code === 1000) return 'Console detached.';
  const meaning = MEANINGS[code] ?? 'The console connection closed';
  const detail = reason.trim();
  const sameAsMeaning = detail.toLowerCase() === meaning.toLowerCase();
  return `${meaning}${detail && !sameAsMeaning ? `: ${detail}` : ''} (code ${code}).`;
}

/** Closes that end access for good; anything else may be worth a reconnect. */
export function isFinalClose(code: number): boolean {
  return code === 4403 || code === 4404 || code === 4410;
}

export const NOTICE_PREFIX = '[leasehold]';

/** Leasehold's own notices arrive as text frames, one line each: "[leasehold] waiting for the console…\r\n". */
export function noticeText(frame: string): string | null {
  const line = frame.replace(/\r?\n$/, '');
  return line.startsWith(NOTICE_PREFIX) ? line.slice(NOTICE_PREFIX.length).trim() : null;
}
