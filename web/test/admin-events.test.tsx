import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, meBody, PROJECT } from './fake-api';

const event = (seq: number, type: string, details: Record<string, unknown> = {}) => ({
  seq: String(seq),
  at: `2030-01-01T00:${String(seq % 60).padStart(2, '0')}:00.000Z`,
  type,
  outcome: 'ok',
  actor: 'engine',
  node_id: null,
  lease_id: 'l-1',
  offer_id: null,
  project_id: PROJECT.id,
  node_name: null,
  project_name: PROJECT.name,
  message: `event ${seq}`,
  display_message: `event ${seq}`,
  details,
});

const NODE_ID = '0b6a5c3e-1111-4222-8333-944455556666';
/** An engine event as the API sends it: ids in the message as recorded, names in display_message. */
const handedOver = {
  ...event(4, 'allocation.active'),
  node_id: NODE_ID,
  node_name: 'gpu-a100-01',
  message: `node ${NODE_ID} handed to project ${PROJECT.id}`,
  display_message: `node gpu-a100-01 handed to project ${PROJECT.name}`,
};

function setup() {
  const api = fakeApi({
    'GET /v1/me': () => meBody('admin'),
    'GET /v1/projects': () => ({ projects: [{ ...PROJECT, description: '', quota: { max_nodes: null, max_lease_duration: null }, created_at: '', updated_at: '' }], next: null }),
    'GET /v1/events': (_req, url) => {
      const q = url.searchParams;
      if (q.get('since') === '2031-01-01T00:00:00.000Z') return apiError(400, 'invalid_request', 'invalid request: query.since: Invalid ISO datetime', { issues: [{ field: 'query.since', message: 'Invalid ISO datetime' }] });
      if (q.get('type') === 'allocation') return { events: [handedOver], next: null };
      if (!q.has('type')) return { events: [event(9, 'node.power_on')], next: null };
      // Newest first: the API's next link carries the filters and moves the marker on.
      if (q.get('marker') === '7') return { events: [event(6, 'lease.created'), event(5, 'lease.created')], next: null };
      const next = new URLSearchParams(q);
      next.set('marker', '7');
      return { events: [event(8, 'lease.extended', { from: 'a', to: 'b' }), event(7, 'lease.created')], next: `/v1/events?${next.toString()}` };
    },
  });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path: '/admin/events' }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return api;
}

const eventRequests = (api: ReturnType<typeof setup>) =>
  api.requests.map((r) => new URL(r.url)).filter((u) => u.pathname === '/v1/events').map((u) => Object.fromEntries(u.searchParams));

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('the filters are sent as the API’s query, and “Load more” follows the API’s next link', async () => {
  const user = userEvent.setup();
  const api = setup();
  expect(await screen.findByText('event 9')).toBeTruthy();
  expect(eventRequests(api)[0]).toEqual({ limit: '50' });

  await user.type(screen.getByLabelText('Type'), 'lease');
  await user.type(screen.getByLabelText('Lease'), 'l-1');
  await user.selectOptions(screen.getByLabelText('Project'), PROJECT.name);
  fireEvent.change(screen.getByLabelText('Since (UTC)'), { target: { value: '2030-01-01T00:00' } });
  await user.click(screen.getByRole('button', { name: 'Apply filters' }));
  expect(await screen.findByText('event 8')).toBeTruthy();
  const filtered = { limit: '50', type: 'lease', lease_id: 'l-1', project: PROJECT.id, since: '2030-01-01T00:00:00.000Z' };
  expect(eventRequests(api).at(-1)).toEqual(filtered);
  expect(screen.queryByText('event 9')).toBeNull();

  await user.click(screen.getByRole('button', { name: 'Load more' }));
  expect(await screen.findByText('event 5')).toBeTruthy();
  expect(eventRequests(api).at(-1)).toEqual({ ...filtered, marker: '7' });
  // Newest first, the older page below; no more pages.
  const messages = screen.getAllByText(/^event \d$/).map((e) => e.textContent);
  expect(messages).toEqual(['event 8', 'event 7', 'event 6', 'event 5']);
  expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();

  // Each event's details open on demand.
  const summary = screen.getByText('Details');
  expect(summary.closest('details')?.open).toBe(false);
  await user.click(summary);
  expect(summary.closest('details')?.open).toBe(true);
  expect(summary.closest('details')?.textContent).toContain('"from": "a"');
});

test('a filter the API refuses is marked with the API’s message', async () => {
  const user = userEvent.setup();
  setup();
  await screen.findByText('event 9');
  const since = screen.getByLabelText('Since (UTC)');
  fireEvent.change(since, { target: { value: '2031-01-01T00:00' } });
  await user.click(screen.getByRole('button', { name: 'Apply filters' }));
  await waitFor(() => expect(since.getAttribute('aria-invalid')).toBe('true'));
  expect(document.getElementById('events-since-error')?.textContent).toBe('Invalid ISO datetime');
});

test('events read with names: the node and project by name, and the message with names for the ids it mentions', async () => {
  const user = userEvent.setup();
  const api = setup();
  await screen.findByText('event 9');
  await user.type(screen.getByLabelText('Type'), 'allocation');
  await user.click(screen.getByRole('button', { name: 'Apply filters' }));
  const message = await screen.findByText(`node gpu-a100-01 handed to project ${PROJECT.name}`);
  // The message as recorded, ids and all, is kept in its tooltip.
  expect(message.getAttribute('title')).toBe(`node ${NODE_ID} handed to project ${PROJECT.id}`);
  const row = message.closest('tr')!;
  expect(row.textContent).toContain('node gpu-a100-01');
  expect(row.textContent).toContain(`project ${PROJECT.name}`);
  expect(row.textContent).not.toContain(NODE_ID);
  // The names come with the events: the page never lists the whole inventory to find them.
  expect(api.requests.some((r) => new URL(r.url).pathname === '/v1/nodes')).toBe(false);
});
