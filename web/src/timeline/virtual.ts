// Row windowing, pure: which rows of a long list are rendered for a scroll position. Only those exist in the
// DOM (plus a few either side, so keyboard focus and fast scrolling find rows ready); the rest is a spacer.

export interface VirtualWindow {
  /** Index of the first rendered row. */
  readonly first: number;
  /** Index after the last rendered row (exclusive). */
  readonly last: number;
  /** The first rendered row's offset from the top of the list, px. */
  readonly offset: number;
  /** The whole list's height, px: the scroll extent. */
  readonly total: number;
}

export interface WindowInput {
  readonly rowCount: number;
  readonly rowHeight: number;
  /** Scroll offset of the list's top edge, px (clamped into range). */
  readonly scrollTop: number;
  /** Height of the visible part of the list, px. */
  readonly viewport: number;
  /** Extra rows rendered above and below the visible ones. */
  readonly overscan?: number;
}

export function virtualWindow({ rowCount, rowHeight, scrollTop, viewport, overscan = 6 }: WindowInput): VirtualWindow {
  const total = rowCount * rowHeight;
  if (rowCount === 0 || rowHeight <= 0) return { first: 0, last: 0, offset: 0, total: 0 };
  const top = Math.min(Math.max(0, scrollTop), Math.max(0, total - viewport));
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const visible = Math.ceil(Math.max(viewport, 0) / rowHeight) + 1;
  const last = Math.min(rowCount, Math.floor(top / rowHeight) + visible + overscan);
  return { first, last, offset: first * rowHeight, total };
}

/** The scrollTop that brings row `index` fully into view, or null when it already is. */
export function scrollToRow(index: number, rowHeight: number, scrollTop: number, viewport: number): number | null {
  const top = index * rowHeight;
  if (top < scrollTop) return top;
  if (top + rowHeight > scrollTop + viewport) return top + rowHeight - viewport;
  return null;
}
