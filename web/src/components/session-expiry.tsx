import { useNow } from '../lib/use-now';
import { formatTime } from '../lib/format';

/** Ten minutes before the end the expiry turns into a countdown, in the warning colour: time to save one's work. */
const WARN_MS = 10 * 60_000;

/** "10:32" today, the date too otherwise. */
function until(iso: string, now: number): string {
  const end = new Date(iso);
  if (end.toDateString() !== new Date(now).toDateString()) return formatTime(iso);
  return end.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/**
 * When the session's token expires (Keystone's expires_at): Keystone tokens last an hour by default and cannot be
 * renewed without the password, so the user is told in advance. Past it, the next request's 401 leads back to the
 * sign-in page, which says the session expired.
 */
export function SessionExpiry({ expiresAt }: { expiresAt: string }) {
  const now = useNow(15_000);
  const left = Date.parse(expiresAt) - now;
  const text = left <= 0 ? 'Session expired' : left < WARN_MS ? `Session ends in ${Math.ceil(left / 60_000)} min` : `Signed in until ${until(expiresAt, now)}`;
  return (
    <span className={left < WARN_MS ? 'expiry warn' : 'expiry'} title={`The token expires at ${expiresAt}`}>
      <time dateTime={expiresAt}>{text}</time>
    </span>
  );
}
