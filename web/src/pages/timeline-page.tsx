import { useMemo, useState } from 'react';
import type { Api } from '../api/client';
import { ApiError, unwrap } from '../api/errors';
import { fetchAll } from '../api/fetch-all';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { ErrorNotice } from '../components/error-notice';
import { ExpressionFilter } from '../components/expression-filter';
import { useNow } from '../lib/use-now';
import { audiences } from '../nav';
import type { AvailabilityNode } from '../timeline/layout';
import { rangeFor, rangeTitle, shift, ZOOMS, type Range, type Zoom } from '../timeline/scale';
import { TimelineGrid } from '../timeline/timeline-grid';

const ZOOM_LABEL: Record<Zoom, string> = { day: 'Day', week: 'Week', month: 'Month' };
const REFRESH_MS = 60_000;

interface Availability {
  nodes: AvailabilityNode[];
  truncated: boolean;
  cleaningGap: string;
}

/** Every node's availability over the range (pages of 1,000 followed; at most 20). */
export async function loadAvailability(api: Api, range: Range, where: string, signal: AbortSignal): Promise<Availability> {
  let cleaningGap = '';
  const nodes = await fetchAll(async (marker) => {
    const query = { from: new Date(range.start).toISOString(), to: new Date(range.end).toISOString(), limit: 1000, marker, ...(where ? { where } : {}) };
    const page = unwrap(await api.GET('/v1/availability', { params: { query }, signal }));
    cleaningGap = page.cleaning_gap;
    return { items: page.nodes, next: page.next };
  });
  return { nodes: nodes.items, truncated: nodes.truncated, cleaningGap };
}

export function TimelinePage() {
  const api = useApi();
  const viewer = useViewer();
  const now = useNow(30_000);
  const [zoom, setZoom] = useState<Zoom>('week');
  const [anchor, setAnchor] = useState(() => Date.now());
  const [where, setWhere] = useState('');
  const [inspected, setInspected] = useState('');
  const range = useMemo(() => rangeFor(zoom, anchor), [zoom, anchor]);
  const availability = useResource((signal) => loadAvailability(api, range, where, signal), [range.start, range.end, where], {
    pollMs: REFRESH_MS,
  });
  // Whoever the request form is for (members, and the operator, who picks the project there).
  const canRequest = audiences.lessees(viewer);
  const title = rangeTitle(zoom, range);
  const unit = zoom;

  const expressionError = where && availability.error instanceof ApiError && availability.error.details.field === 'where' ? availability.error : undefined;

  return (
    <section>
      <h1>Availability timeline</h1>
      <div className="tl-toolbar">
        <div className="segmented" role="group" aria-label="Zoom">
          {ZOOMS.map((z) => (
            <button key={z} type="button" aria-pressed={zoom === z} onClick={() => setZoom(z)}>
              {ZOOM_LABEL[z]}
            </button>
          ))}
        </div>
        <div className="row" role="group" aria-label="Move in time">
          <button type="button" className="secondary" onClick={() => setAnchor((a) => shift(zoom, a, -1))} aria-label={`Previous ${unit}`}>
            ‹ Earlier
          </button>
          <button type="button" className="secondary" onClick={() => setAnchor(Date.now())}>
            Today
          </button>
          <button type="button" className="secondary" onClick={() => setAnchor((a) => shift(zoom, a, 1))} aria-label={`Next ${unit}`}>
            Later ›
          </button>
        </div>
        <h2 className="tl-range" aria-live="polite">
          {title}
        </h2>
      </div>
      <ExpressionFilter
        id="timeline-where"
        label="Filter nodes by requirement expression"
        placeholder="gpus >= 1 and memory >= 48GiB"
        where={where}
        onApply={setWhere}
        error={expressionError?.message}
      />

      {availability.loading && <p aria-busy="true">Loading availability…</p>}
      {availability.error !== undefined && !expressionError && (
        <ErrorNotice error={availability.error} retry={availability.reload} title="Could not load the timeline" />
      )}
      {availability.data && (
        <>
          <p className="muted small" aria-live="polite">
            {availability.data.nodes.length} nodes{where && ` matching ${JSON.stringify(where)}`}
            {availability.data.truncated && ' (the first 20,000 only)'}
            {availability.data.cleaningGap && ` · ${shortDuration(availability.data.cleaningGap)} kept for cleaning after each lease`}
            {canRequest && ' · choose a free slot to request a lease there'}
          </p>
          {availability.data.nodes.length === 0 ? (
            <p className="empty">
              {where
                ? 'No node you can see matches in this window.'
                : 'No nodes to show: your project owns none, none is offered to it in this window, and it leases none.'}
            </p>
          ) : (
            <TimelineGrid
              nodes={availability.data.nodes}
              range={range}
              zoom={zoom}
              now={now}
              projectId={viewer.project?.id ?? null}
              canRequest={canRequest}
              onInspect={setInspected}
            />
          )}
          <p className="tl-inspect small" aria-live="polite">
            {inspected}
          </p>
          <Legend canRequest={canRequest} />
        </>
      )}
    </section>
  );
}

/** "PT10M" → "10m", "P1DT2H" → "1d2h". */
function shortDuration(iso: string): string {
  return iso.replace(/^P/, '').replace('T', '').toLowerCase();
}

function Legend({ canRequest }: { canRequest: boolean }) {
  return (
    <ul className="tl-legend" aria-label="Legend">
      <li><span className="tl-swatch offered" aria-hidden="true" /> Offered</li>
      <li><span className="tl-swatch unavailable" aria-hidden="true" /> Not offered (unavailable)</li>
      <li><span className="tl-swatch free" aria-hidden="true" /> Free{canRequest ? ' (choose to request)' : ''}</li>
      <li><span className="tl-swatch mine" aria-hidden="true" /> Your project’s lease</li>
      <li><span className="tl-swatch other" aria-hidden="true" /> Another project’s lease (on your nodes)</li>
      <li><span className="tl-swatch busy" aria-hidden="true" /> Busy</li>
      <li><span className="tl-swatch cleaning" aria-hidden="true" /> Cleaning</li>
      <li><span className="tl-swatch now" aria-hidden="true" /> Now</li>
    </ul>
  );
}

