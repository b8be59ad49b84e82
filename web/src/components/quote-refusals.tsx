import { ApiError, errorText } from '../api/errors';

/**
 * One group of a refused request as the planner reports it in `error.details.groups` of a 409 lease_unavailable
 * (src/domain/scheduling/plan.ts GroupReport): `group` is the 0-based index over the groups sent, then one per
 * named node; the counts narrow down (matching ⊇ allowed ⊇ free).
 */
export interface GroupRefusal {
  readonly group: number;
  readonly count: number;
  readonly where: string;
  readonly matching: number;
  readonly allowed: number;
  readonly free: number;
  readonly reasons: readonly string[];
  readonly taken: readonly string[];
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/**
 * The per-group report of a refusal, or null when the error carries none (a quota refusal, a validation error, a
 * server without the report): then the caller shows the message as it is. Malformed entries make the whole
 * report null rather than a list that silently misses a group.
 */
export function groupRefusals(err: unknown): GroupRefusal[] | null {
  if (!(err instanceof ApiError) || err.status !== 409) return null;
  const raw = err.details.groups;
  if (!Array.isArray(raw) || raw.length === 0) return null;
  const out: GroupRefusal[] = [];
  for (const g of raw as Record<string, unknown>[]) {
    if (typeof g !== 'object' || g === null) return null;
    const { group, count, where, matching, allowed, free } = g;
    if (![group, count, matching, allowed, free].every(isCount) || typeof where !== 'string') return null;
    out.push({
      group: group as number,
      count: count as number,
      where,
      matching: matching as number,
      allowed: allowed as number,
      free: free as number,
      reasons: strings(g.reasons),
      taken: strings(g.taken),
    });
  }
  return out.sort((a, b) => a.group - b.group);
}

interface Props {
  error: unknown;
  /**
   * How a reported group reads in the form: "Group 2" for the form's second group (numbered from 1, as the form's
   * labels, the API's message and the CLI number them), or "Named node" for a node named in the request.
   */
  groupLabel: (group: number) => string;
}

/**
 * Why a quote or a request was refused, one entry per group: what it asked, how many nodes matched the
 * requirement, how many of those the owners' policies allow for this window, how many are free, what was short
 * and why. The server's whole sentence stays available below the list (for a support ticket).
 */
export function QuoteRefusals({ error, groupLabel }: Props) {
  const groups = groupRefusals(error);
  if (groups === null) return <p className="error-box lr-reason">{errorText(error)}</p>;
  const allEnough = groups.every((g) => g.free >= g.count);
  return (
    <div className="qr">
      <ul className="qr-list" aria-label="Why, by group">
        {groups.map((g) => {
          const short = g.count - g.free;
          const label = groupLabel(g.group);
          return (
            <li key={g.group} className={short > 0 ? 'qr-group qr-short' : 'qr-group'} aria-label={label}>
              <div className="qr-head">
                <strong>{label}</strong> <span className="mono">{g.where.startsWith('node ') ? g.where.slice(5) : `${g.count} × ${g.where}`}</span>
              </div>
              <dl className="qr-counts">
                <div><dt>matching</dt><dd>{g.matching}</dd></div>
                <div><dt>allowed</dt><dd>{g.allowed}</dd></div>
                <div><dt>free</dt><dd>{g.free}</dd></div>
              </dl>
              <p className={short > 0 ? 'error qr-verdict' : 'muted qr-verdict'}>
                {short > 0 ? `Short by ${short} (needs ${g.count}).` : `Enough on its own (needs ${g.count}).`}
              </p>
              {g.reasons.length > 0 && (
                <ul className="qr-reasons small" aria-label={`${label}: why not the others`}>
                  {g.reasons.map((r) => (
                    <li key={r}>{r}</li>
                  ))}
                </ul>
              )}
              {g.taken.length > 0 && (
                <p className="small muted qr-taken">
                  Leased by others then: <span className="mono">{g.taken.join(', ')}</span>
                </p>
              )}
            </li>
          );
        })}
      </ul>
      <p className="small muted qr-legend">
        Matching: the hardware fits the requirement. Allowed: of those, healthy and offered to you by their owners for
        this window and length. Free: of those, not leased by anyone then.
      </p>
      {allEnough && (
        <p className="small">Each group has enough free nodes on its own, but not all at once: they need some of the same nodes.</p>
      )}
      <details className="small qr-message">
        <summary>The server's message</summary>
        <p className="mono">{errorText(error)}</p>
      </details>
    </div>
  );
}
