import { formatCountdown } from '../lib/format';
import { useNow } from '../lib/use-now';

/**
 * A live countdown to `to` ("2d 03:04:05"), then `after`. role="timer" keeps screen readers from announcing every
 * second; the exact UTC instant is in the title and the datetime attribute.
 */
export function Countdown({ to, after = 'now', now: fixedNow }: { to: string; after?: string; now?: number }) {
  const ticking = useNow(1000);
  const now = fixedNow ?? ticking;
  const ms = Date.parse(to) - now;
  return (
    <time role="timer" dateTime={to} title={to} className="countdown">
      {ms > 0 ? formatCountdown(ms) : after}
    </time>
  );
}
