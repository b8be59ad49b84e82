import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { AvailabilityNode } from '../src/timeline/layout';
import { ROW_HEIGHT } from '../src/timeline/timeline-grid';
import { renderPages } from './render-pages';
import { apiError, fakeApi, meBody, PROJECT } from './fake-api';

const HOUR = 3_600_000;
const NODE_COUNT = 1000;
const BAD = 'invalid expression at position 6: expected a value, got ">"\ngpus >>= 1\n     ^';

/** 1,000 nodes over whatever window is asked: node 0 carries the caller's lease, node 1 another project's. */
let served: AvailabilityNode[] = [];
let nameOf = (i: number) => `gpu-${String(i).padStart(4, '0')}`;
function availability(from: number, to: number): AvailabilityNode[] {
  const iso = (t: number) => new Date(t).toISOString();
  const mid = from + Math.floor((to - from) / 2 / HOUR) * HOUR;
  served = Array.from({ length: NODE_COUNT }, (_, i) => {
    const name = nameOf(i);
    const busyStart = mid;
    const busyEnd = mid + 4 * HOUR;
    const busy: AvailabilityNode['busy'] =
      i === 0
        ? [
            { start: iso(busyStart), end: iso(busyEnd), kind: 'lease', lease: { id: 'L0', name: 'my-run', state: 'active', project: PROJECT } },
            { start: iso(busyEnd), end: iso(busyEnd + HOUR / 6), kind: 'cleaning', lease: { id: 'L0', name: 'my-run', state: 'active', project: PROJECT } },
          ]
        : i % 2 === 1
          ? [{ start: iso(busyStart), end: iso(busyEnd), kind: 'lease' }]
          : [];
    return {
      id: `n${i}`,
      name,
      resource_class: 'baremetal',
      owned: false,
      owner_project: null,
      unavailable: i === 4 ? 'in maintenance' : null,
      offers: [{ id: `o${i}`, start: iso(from - HOUR), end: null, max_lease_duration: 'P5D', min_lease_duration: null, weekly_summary: null, windows: null }],
      busy,
      free: i === 4 ? [] : [{ start: iso(busyEnd + HOUR), end: iso(to) }],
    };
  });
  return served;
}

function setup(role: 'member' | 'reader' = 'member') {
  const api = fakeApi({
    'GET /v1/me': () => meBody(role),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'GET /v1/availability': (_req, url) => {
      if (url.searchParams.get('where') === 'gpus >>= 1') return apiError(400, 'invalid_request', BAD, { field: 'where', position: 6 });
      const from = Date.parse(url.searchParams.get('from')!);
      const to = Date.parse(url.searchParams.get('to')!);
      return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), now: new Date().toISOString(), cleaning_gap: 'PT10M', nodes: availability(from, to), next: null };
    },
    'POST /v1/leases/quote': () => apiError(409, 'lease_unavailable', 'not now', { earliest_start: null }),
  });
  const location = renderPages('/timeline', api.fetch);
  return { api, location };
}

const dataRows = () => screen.getAllByRole('row').filter((r) => r.getAttribute('aria-rowindex') !== '1');
const availabilityRequests = (api: ReturnType<typeof fakeApi>) =>
  api.requests.map((r) => new URL(r.url)).filter((u) => u.pathname === '/v1/availability');

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('with 1,000 nodes only a window of rows is in the DOM, and scrolling moves the window', async () => {
  const started = performance.now();
  setup();
  const table = await screen.findByRole('table', { name: /^Availability/ });
  const firstRender = performance.now() - started;
  expect(table.getAttribute('aria-rowcount')).toBe(String(NODE_COUNT + 1));
  const initial = dataRows();
  expect(initial.length).toBeGreaterThan(10);
  expect(initial.length).toBeLessThanOrEqual(40);
  expect(within(table).getByRole('rowheader', { name: 'gpu-0000' })).toBeTruthy();
  expect(within(table).queryByRole('rowheader', { name: 'gpu-0500' })).toBeNull();

  const scrolled = performance.now();
  act(() => {
    table.scrollTop = ROW_HEIGHT * 500;
    fireEvent.scroll(table);
  });
  const scrollRender = performance.now() - scrolled;
  expect(within(table).getByRole('rowheader', { name: 'gpu-0500' })).toBeTruthy();
  expect(within(table).queryByRole('rowheader', { name: 'gpu-0000' })).toBeNull();
  expect(dataRows().length).toBeLessThanOrEqual(40);
  const row500 = within(table).getByRole('rowheader', { name: 'gpu-0500' }).closest('[role="row"]')!;
  expect(row500.getAttribute('aria-rowindex')).toBe('502');

  act(() => {
    table.scrollTop = ROW_HEIGHT * NODE_COUNT;
    fireEvent.scroll(table);
  });
  expect(within(table).getByRole('rowheader', { name: 'gpu-0999' })).toBeTruthy();
  const elements = table.querySelectorAll('*').length;
  // The figure for web/README.md: DOM rows and elements at once, jsdom render times (not a browser's).
  console.log(
    `[figures] timeline with ${NODE_COUNT} nodes: ${initial.length} rows in the DOM at once (${dataRows().length} at the end), ` +
      `${elements} elements in the grid; jsdom: first render ${firstRender.toFixed(0)} ms (incl. sign-in), scroll re-render ${scrollRender.toFixed(0)} ms`,
  );
});

test('bars and free slots are links and buttons with accessible names; a free slot starts a prefilled request', async () => {
  const user = userEvent.setup();
  const { location } = setup();
  const table = await screen.findByRole('table', { name: /^Availability/ });
  const mine = within(table).getByRole('link', { name: /^gpu-0000 my-run / });
  expect(mine.getAttribute('href')).toBe('/leases/L0');
  expect(within(table).getByRole('button', { name: /^gpu-0000 cleaning / })).toBeTruthy();
  const busy = within(table).getByRole('button', { name: /^gpu-0001 busy / });
  expect(busy.textContent).not.toContain('my-run');
  expect(within(table).queryByRole('button', { name: /^gpu-0004 free/ })).toBeNull();
  expect(within(table).getByRole('rowheader', { name: /gpu-0004/ }).textContent).toContain('in maintenance');

  // Activating another project's busy time says what it is, nothing more.
  await user.click(busy);
  expect(screen.getByText(busy.getAttribute('aria-label')!, { selector: '.tl-inspect' })).toBeTruthy();

  const free = within(table).getByRole('button', { name: /^gpu-0002 free from .*, request a lease$/ });
  // It runs past the view: the view does not know its end, and does not claim one.
  expect(free.getAttribute('aria-label')).not.toContain('until');
  free.focus();
  await user.keyboard('{Enter}');
  const target = new URL(location.history.at(-1)!, 'http://x');
  expect(target.pathname).toBe('/leases/new');
  expect(target.searchParams.get('node')).toBe('gpu-0002');
  // From the keyboard, the slot's own start.
  expect(target.searchParams.get('start')).toBe(served[2]!.free[0]!.start);
  expect(((await screen.findByLabelText('Named nodes')) as HTMLInputElement).value).toBe('gpu-0002');
});

test('at phone width long node names that share their beginning stay distinguishable, the full name in the title and the accessible name', async () => {
  const original = nameOf;
  nameOf = (i) => `physics-lab-rack07-gpu-a100-${String(i).padStart(4, '0')}`;
  // jsdom does no layout: the grid's box is 375 px wide, as on a phone.
  Object.defineProperty(HTMLElement.prototype, 'clientWidth', {
    configurable: true,
    get(this: HTMLElement) {
      return this.classList.contains('tl-scroll') ? 375 : 0;
    },
  });
  try {
    setup();
    const table = await screen.findByRole('table', { name: /^Availability/ });
    const headers = within(table).getAllByRole('rowheader');
    expect(headers.length).toBeGreaterThan(10);
    const shown = headers.map((h) => h.querySelector('.tl-name-text')!.textContent!);
    // Every visible label differs, fits the narrow column, and ends in the part that differs.
    expect(new Set(shown).size).toBe(shown.length);
    expect(shown[0]).toBe('…-a100-0000');
    for (const text of shown) expect(text.length).toBeLessThanOrEqual(11);
    const first = within(table).getByRole('rowheader', { name: 'physics-lab-rack07-gpu-a100-0000' });
    expect(first.getAttribute('title')).toBe('physics-lab-rack07-gpu-a100-0000');
  } finally {
    // Back to Element.prototype's (jsdom's) clientWidth.
    delete (HTMLElement.prototype as { clientWidth?: number }).clientWidth;
    nameOf = original;
  }
});

test('zoom and moving in time are buttons, and each asks the API for the window shown', async () => {
  const user = userEvent.setup();
  const { api } = setup();
  await screen.findByRole('table', { name: /^Availability/ });
  const span = () => {
    const last = availabilityRequests(api).at(-1)!;
    return { from: Date.parse(last.searchParams.get('from')!), to: Date.parse(last.searchParams.get('to')!) };
  };
  const week = span();
  expect(Math.round((week.to - week.from) / HOUR / 24)).toBe(7);
  expect(screen.getByRole('button', { name: 'Week' }).getAttribute('aria-pressed')).toBe('true');

  await user.click(screen.getByRole('button', { name: 'Day' }));
  await screen.findByRole('table', { name: /^Availability/ });
  const day = span();
  expect(Math.round((day.to - day.from) / HOUR)).toBeGreaterThanOrEqual(23);
  expect(Math.round((day.to - day.from) / HOUR)).toBeLessThanOrEqual(25);
  expect(day.from).toBeLessThanOrEqual(Date.now());
  expect(day.to).toBeGreaterThan(Date.now());

  await user.click(screen.getByRole('button', { name: 'Next day' }));
  await screen.findByRole('table', { name: /^Availability/ });
  expect(span().from).toBe(day.to);
  await user.click(screen.getByRole('button', { name: 'Today' }));
  await screen.findByRole('table', { name: /^Availability/ });
  expect(span().from).toBe(day.from);

  await user.click(screen.getByRole('button', { name: 'Month' }));
  await screen.findByRole('table', { name: /^Availability/ });
  expect(new Date(span().from).getDate()).toBe(1);
});

test('a requirement expression filters through the API; its error is shown verbatim on the field', async () => {
  const user = userEvent.setup();
  const { api } = setup();
  await screen.findByRole('table', { name: /^Availability/ });
  const box = screen.getByLabelText('Requirement expression');
  await user.type(box, 'gpus >>= 1{Enter}');
  const alert = await screen.findByRole('alert');
  expect(alert.textContent).toBe(BAD);
  expect(box.getAttribute('aria-invalid')).toBe('true');
  expect(box.getAttribute('aria-describedby')).toBe(alert.id);
  expect(availabilityRequests(api).at(-1)!.searchParams.get('where')).toBe('gpus >>= 1');
});

test('a reader sees free time but is not offered to request it', async () => {
  setup('reader');
  const table = await screen.findByRole('table', { name: /^Availability/ });
  expect(within(table).queryByRole('button', { name: /free from/ })).toBeNull();
  expect(within(table).getByRole('link', { name: /^gpu-0000 my-run / })).toBeTruthy();
});
