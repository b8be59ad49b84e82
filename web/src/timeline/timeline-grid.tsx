import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type MouseEvent, type RefObject } from 'react';
import { Link, useLocation } from 'wouter';
import './timeline.css';
import { layoutRow, nodeLabel, requestHref, type AvailabilityNode, type Segment } from './layout';
import { rangeTitle, snapStart, ticks, timeToX, trackWidth, xToTime, type Range, type Zoom } from './scale';
import { fitShortNames } from './short-names';
import { virtualWindow, type VirtualWindow } from './virtual';

export const ROW_HEIGHT = 34;
export const HEADER_HEIGHT = 40;
/** Used until the box is measured (and in environments without layout, like jsdom). */
const FALLBACK_WIDTH = 1000;
const FALLBACK_VIEWPORT = 600;

export interface TimelineGridProps {
  nodes: readonly AvailabilityNode[];
  range: Range;
  zoom: Zoom;
  now: number;
  projectId: string | null;
  /** Free slots start a lease request (project members); otherwise they are only drawn. */
  canRequest: boolean;
  /** A bar was activated that has no page of its own (another project's busy time, cleaning). */
  onInspect?: (label: string) => void;
}

let measureCache: ((text: string) => number) | null | undefined;

/**
 * The rendered width of a node name in the name column (its font: .tl-name-text), by a canvas; null where there is
 * no canvas to measure with (jsdom), and the labels are sized by an estimate instead.
 */
function nameMeasure(): ((text: string) => number) | null {
  if (measureCache !== undefined) return measureCache;
  measureCache = null;
  if (typeof document === 'undefined' || /jsdom/i.test(navigator.userAgent)) return null;
  const context = document.createElement('canvas').getContext('2d');
  if (!context) return null;
  const root = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
  context.font = `600 ${0.875 * root}px ${getComputedStyle(document.body).fontFamily}`;
  measureCache = (text) => context.measureText(text).width;
  return measureCache;
}

/** Width and height of an element, followed as it changes (a fallback where there is no layout). */
function useBoxSize(ref: RefObject<HTMLElement | null>): { width: number; height: number } {
  const [size, setSize] = useState({ width: 0, height: 0 });
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const read = () => setSize((s) => (s.width === el.clientWidth && s.height === el.clientHeight ? s : { width: el.clientWidth, height: el.clientHeight }));
    read();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(read);
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return size;
}

/**
 * Nodes as rows, time as columns. Only the rows in view (and a few either side) are in the DOM: each is one
 * positioned line with its name, its shading and its bars as absolutely positioned boxes — nothing per column.
 * The grid scrolls both ways inside its box; the time axis and the node names stay in place.
 */
export function TimelineGrid({ nodes, range, zoom, now, projectId, canRequest, onInspect }: TimelineGridProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const size = useBoxSize(scrollRef);
  const narrow = (size.width || FALLBACK_WIDTH) < 640;
  const nameWidth = narrow ? 112 : 176;
  const track = trackWidth(zoom, (size.width || FALLBACK_WIDTH) - nameWidth - 2);
  const viewport = Math.max(ROW_HEIGHT, (size.height || FALLBACK_VIEWPORT) - HEADER_HEIGHT);

  const scrollTop = useRef(0);
  const compute = useCallback(
    () => virtualWindow({ rowCount: nodes.length, rowHeight: ROW_HEIGHT, scrollTop: scrollTop.current, viewport }),
    [nodes.length, viewport],
  );
  const [win, setWin] = useState<VirtualWindow>(compute);
  useEffect(() => setWin(compute()), [compute]);
  const onScroll = useCallback(() => {
    scrollTop.current = scrollRef.current?.scrollTop ?? 0;
    const next = compute();
    // Re-render only when the set of rendered rows changes, not on every scrolled pixel.
    setWin((w) => (w.first === next.first && w.last === next.last && w.total === next.total ? w : next));
  }, [compute]);

  const columns = useMemo(() => ticks(zoom, range), [zoom, range]);
  const columnWidth = columns.length > 0 ? track / columns.length : track;
  const nowX = now >= range.start && now < range.end ? timeToX(now, range, track) : null;
  const title = rangeTitle(zoom, range);
  const [, navigate] = useLocation();

  const onFree = useCallback(
    (node: AvailabilityNode, slot: Segment, event: MouseEvent<HTMLButtonElement>) => {
      let start = slot.start;
      // A pointer click starts where it was clicked (snapped); the keyboard starts at the slot's beginning.
      if (event.detail > 0) {
        const trackEl = event.currentTarget.parentElement;
        const rect = trackEl?.getBoundingClientRect();
        if (rect && rect.width > 0) start = snapStart(zoom, xToTime(event.clientX - rect.left, range, track), slot);
      }
      navigate(requestHref(node, start));
    },
    [navigate, range, track, zoom],
  );

  // Labels over every node, not the rows in view, so a row keeps its label while scrolling.
  const labels = useMemo(() => fitShortNames(nodes.map(nodeLabel), nameWidth, nameMeasure()), [nodes, nameWidth]);
  const rows = nodes.slice(win.first, win.last);
  const fullWidth = nameWidth + track;
  const height = Math.min(HEADER_HEIGHT + win.total + 16, 0.72 * (typeof window === 'undefined' ? 900 : window.innerHeight || 900));

  return (
    <div
      ref={scrollRef}
      className="tl-scroll"
      onScroll={onScroll}
      style={{ height: Math.max(height, HEADER_HEIGHT + ROW_HEIGHT * 3) }}
      role="table"
      aria-label={`Availability, ${title}`}
      aria-rowcount={nodes.length + 1}
      aria-colcount={2}
    >
      <div className="tl-inner" style={{ width: fullWidth, height: HEADER_HEIGHT + win.total }}>
        <div className="tl-header" role="row" aria-rowindex={1} style={{ width: fullWidth, height: HEADER_HEIGHT }}>
          <div className="tl-corner" role="columnheader" style={{ width: nameWidth }}>
            Node
          </div>
          <div className="tl-axis" role="columnheader" style={{ width: track }}>
            <span className="tl-sr">{title}</span>
            {columns.map((c) => (
              <span
                key={c.t}
                className={c.major ? 'tl-tick major' : 'tl-tick'}
                style={{ left: timeToX(c.t, range, track), width: columnWidth }}
                aria-hidden="true"
              >
                {columnWidth >= 28 || c.major ? c.label : ''}
              </span>
            ))}
          </div>
        </div>
        <div className="tl-rows" style={{ height: win.total, width: fullWidth }} role="rowgroup">
          {nowX !== null && (
            <div className="tl-now" style={{ left: nameWidth + nowX, height: win.total }} aria-hidden="true" title="Now" />
          )}
          {rows.map((node, i) => (
            <TimelineRow
              key={node.id}
              node={node}
              index={win.first + i}
              range={range}
              zoom={zoom}
              track={track}
              nameWidth={nameWidth}
              shortName={labels.get(nodeLabel(node)) ?? nodeLabel(node)}
              columnWidth={columnWidth}
              projectId={projectId}
              canRequest={canRequest}
              onFree={onFree}
              onInspect={onInspect}
            />
          ))}
        </div>
      </div>
    </div>
  );
}

interface RowProps {
  node: AvailabilityNode;
  index: number;
  range: Range;
  zoom: Zoom;
  track: number;
  nameWidth: number;
  /** The name as it fits the column, told apart from the others (short-names.ts); the full name is the title. */
  shortName: string;
  columnWidth: number;
  projectId: string | null;
  canRequest: boolean;
  onFree: (node: AvailabilityNode, slot: Segment, event: MouseEvent<HTMLButtonElement>) => void;
  onInspect?: (label: string) => void;
}

const TimelineRow = memo(function TimelineRow(props: RowProps) {
  const { node, index, range, zoom, track, nameWidth, shortName, columnWidth, projectId, canRequest, onFree, onInspect } = props;
  const layout = useMemo(() => layoutRow(node, range, track, { zoom, projectId }), [node, range, track, zoom, projectId]);
  const name = nodeLabel(node);
  return (
    <div className="tl-row" role="row" aria-rowindex={index + 2} style={{ top: index * ROW_HEIGHT, height: ROW_HEIGHT }}>
      <div className="tl-name" role="rowheader" style={{ width: nameWidth }} title={node.unavailable ? `${name}: ${node.unavailable}` : name}>
        {shortName === name ? (
          <span className="tl-name-text">{name}</span>
        ) : (
          <>
            <span className="tl-name-text" aria-hidden="true">{shortName}</span>
            <span className="tl-sr">{name}</span>
          </>
        )}
        {node.unavailable && <span className="tl-flag">{node.unavailable}</span>}
      </div>
      <div
        className={node.unavailable ? 'tl-track unavailable' : 'tl-track'}
        role="cell"
        style={{ width: track, backgroundSize: `${columnWidth}px 100%` }}
      >
        {layout.offered.map((b, i) => (
          <div key={`o${i}`} className="tl-offered" style={{ left: b.left, width: b.width }} aria-hidden="true" />
        ))}
        {layout.segments.map((s) => {
          const style = { left: s.left, width: s.width };
          const key = `${s.kind}${s.start}`;
          if (s.kind === 'free') {
            if (!canRequest) return <div key={key} className="tl-free" style={style} aria-hidden="true" />;
            return (
              <button key={key} type="button" className="tl-free" style={style} aria-label={s.label} title={s.label} onClick={(e) => onFree(node, s, e)} />
            );
          }
          const text = s.width >= 44 ? (s.kind === 'cleaning' ? '' : s.text) : '';
          if (s.kind === 'lease' && s.href) {
            return (
              <Link key={key} href={s.href} className={s.mine ? 'tl-bar tl-lease mine' : 'tl-bar tl-lease'} style={style} aria-label={s.label} title={s.label}>
                {text}
              </Link>
            );
          }
          return (
            <button
              key={key}
              type="button"
              className={s.kind === 'cleaning' ? 'tl-bar tl-cleaning' : 'tl-bar tl-busy'}
              style={style}
              aria-label={s.label}
              title={s.label}
              onClick={() => onInspect?.(s.label)}
            >
              {text}
            </button>
          );
        })}
      </div>
    </div>
  );
});
