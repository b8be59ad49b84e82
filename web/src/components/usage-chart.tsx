/** A colour per stack, distinguishable in light and dark themes; more groups than colours repeat them. */
const COLOURS = ['#2456a6', '#d9822b', '#1e7a3c', '#8e44ad', '#b3261e', '#16a2b8', '#8a5a00', '#5b6470'];

export interface ChartGroup {
  key: string;
  label: string;
}

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { left: 44, right: 8, top: 8, bottom: 22 };

/**
 * Node-hours per day, stacked by group, as plain SVG (no chart library: one bar per day is all it takes). Groups
 * are stacked in the order given (most used first, at the bottom); the legend names them.
 */
export function UsageChart({ days, groups }: { days: ReadonlyArray<{ date: string; node_hours: Record<string, number> }>; groups: readonly ChartGroup[] }) {
  const totals = days.map((d) => Object.values(d.node_hours).reduce((a, b) => a + b, 0));
  const max = Math.max(1, ...totals);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(1, slot * 0.8);
  const y = (hours: number) => (hours / max) * plotH;
  const colour = (i: number) => COLOURS[i % COLOURS.length]!;
  return (
    <figure className="usage-chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label="Node-hours per day" style={{ width: '100%', height: 'auto' }}>
        <line x1={PAD.left} y1={PAD.top + plotH} x2={WIDTH - PAD.right} y2={PAD.top + plotH} stroke="currentColor" strokeOpacity={0.4} />
        <text x={PAD.left - 4} y={PAD.top + 10} textAnchor="end" fontSize={11} fill="currentColor">{formatHours(max)}</text>
        <text x={PAD.left - 4} y={PAD.top + plotH} textAnchor="end" fontSize={11} fill="currentColor">0</text>
        {days.map((day, i) => {
          let base = PAD.top + plotH;
          const x = PAD.left + i * slot + (slot - barW) / 2;
          return (
            <g key={day.date} data-date={day.date}>
              <title>{`${day.date}: ${formatHours(totals[i]!)} node-hours`}</title>
              {groups.map((g, gi) => {
                const hours = day.node_hours[g.key] ?? 0;
                if (hours <= 0) return null;
                const h = y(hours);
                base -= h;
                return <rect key={g.key} x={x} y={base} width={barW} height={h} fill={colour(gi)} data-group={g.key} data-hours={hours} />;
              })}
              {(i === 0 || i === days.length - 1 || days.length <= 10) && (
                <text x={x + barW / 2} y={HEIGHT - 6} textAnchor="middle" fontSize={10} fill="currentColor">{day.date.slice(5)}</text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul className="usage-legend" aria-label="Legend">
          {groups.map((g, gi) => (
            <li key={g.key}>
              <span aria-hidden="true" style={{ display: 'inline-block', width: '0.8em', height: '0.8em', marginRight: '0.3em', background: colour(gi) }} />
              {g.label}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}

function formatHours(h: number): string {
  return h >= 10 ? h.toFixed(0) : h.toFixed(1);
}
