import type { Lease } from '../api/client';
import { formatTime } from '../lib/format';
import { shortDuration } from './duration';

/**
 * A lease's notices before its end (`lease.ending_soon`): when each is due for the current end and whether it was
 * sent, the same instants the server sends them at (the API computes them; the page only shows them).
 */
export function LeaseNotices({ lease }: { lease: Lease }) {
  // Older servers (and some tests' leases) have no notices field: nothing to show then.
  const notices = lease.notices ?? [];
  if (notices.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="notices plain" aria-label="Notices before the end">
      {notices.map((n) => (
        <li key={n.offset}>
          {shortDuration(n.offset)} before the end:{' '}
          {n.sent_at ? (
            <span title={n.sent_at}>sent {formatTime(n.sent_at)}</span>
          ) : (
            <span title={n.at} className="muted">to come, {formatTime(n.at)}</span>
          )}
        </li>
      ))}
    </ul>
  );
}
