import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, meBody, PROJECT } from './fake-api';

const NODE = { id: 'n-1', name: 'gpu-01', owner: 'physics-lab', owner_project: PROJECT, facts: {}, traits: [], provision_state: 'available' };
// The API's own words (src/domain/duration.ts): the page must show them as they are, on the field.
const NOT_A_DURATION =
  'max_lease_duration: "5 days" is not a duration; use ISO 8601 like "P3D" or "PT10M", or short like "3d", "90m", "1h30m"';

const offer = (body: Record<string, unknown>) => ({
  id: 'o-1',
  node_id: 'n-1',
  node_name: 'gpu-01',
  project_id: PROJECT.id,
  start: body.start ?? '2030-01-01T00:00:00.000Z',
  end: body.end ?? null,
  max_lease_duration: 'P5D',
  min_lease_duration: null,
  allowed_projects: null,
  status: 'scheduled',
  free_windows: [{ start: body.start ?? '2030-01-01T00:00:00.000Z', end: body.end ?? null }],
  created_at: '2030-01-01T00:00:00.000Z',
  withdrawn_at: null,
});

function setup() {
  const offers: unknown[] = [];
  const posted: Record<string, unknown>[] = [];
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [NODE], next: null }),
    'GET /v1/offers': () => ({ offers, next: null }),
    'POST /v1/offers': async (req) => {
      const body = (await req.json()) as Record<string, unknown>;
      posted.push(body);
      if (body.max_lease_duration === '5 days') {
        return apiError(400, 'invalid_request', NOT_A_DURATION, { field: 'max_lease_duration', value: '5 days' });
      }
      if (Array.isArray(body.allowed_projects) && body.allowed_projects.includes('nobody')) {
        return apiError(400, 'invalid_request', 'allowed_projects: no project has the id or name "nobody"', { field: 'allowed_projects' });
      }
      const created = offer(body);
      offers.push(created);
      return created;
    },
  });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path: '/offers' }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return { api, posted };
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('offer creation shows the API’s field error verbatim on that field, marked invalid and described by it', async () => {
  const user = userEvent.setup();
  setup();
  const longest = await screen.findByLabelText('Longest lease');
  await user.type(longest, '5 days');
  await user.click(screen.getByRole('button', { name: 'Offer node' }));
  await waitFor(() => expect(longest.getAttribute('aria-invalid')).toBe('true'));
  const describedBy = (longest.getAttribute('aria-describedby') ?? '').split(' ');
  const messages = describedBy.map((id) => document.getElementById(id)?.textContent);
  expect(messages).toContain(NOT_A_DURATION);
  // Only that field is marked.
  expect(screen.getByLabelText('Shortest lease').getAttribute('aria-invalid')).toBeNull();
  expect(screen.getByLabelText('Projects allowed to lease it').getAttribute('aria-invalid')).toBeNull();

  // Fixing it clears the mark; another field's error moves there.
  await user.clear(longest);
  await user.type(longest, '5d');
  await user.type(screen.getByLabelText('Projects allowed to lease it'), 'nobody');
  await user.click(screen.getByRole('button', { name: 'Offer node' }));
  const allowed = screen.getByLabelText('Projects allowed to lease it');
  await waitFor(() => expect(allowed.getAttribute('aria-invalid')).toBe('true'));
  expect(longest.getAttribute('aria-invalid')).toBeNull();
  expect(screen.getByText('allowed_projects: no project has the id or name "nobody"')).toBeTruthy();
});

test('the window is entered in UTC, shown in local time alongside, and sent as UTC', async () => {
  const user = userEvent.setup();
  const { posted } = setup();
  const start = await screen.findByLabelText('Start (UTC)');
  expect(screen.getByLabelText('Node').textContent).toContain('gpu-01');
  fireEvent.change(start, { target: { value: '2030-02-01T09:00' } });
  fireEvent.change(screen.getByLabelText('End (UTC)'), { target: { value: '2030-03-01T18:30' } });
  expect(document.getElementById('offer-start-hint')?.textContent).toMatch(/^Your time: /);
  expect(document.getElementById('offer-start-hint')?.querySelector('time')?.getAttribute('datetime')).toBe('2030-02-01T09:00:00.000Z');
  await user.type(screen.getByLabelText('Longest lease'), '5d');
  await user.click(screen.getByRole('button', { name: 'Offer node' }));
  expect(await screen.findByText(/gpu-01 is offered/)).toBeTruthy();
  expect(posted.at(-1)).toEqual({ node_id: 'n-1', start: '2030-02-01T09:00:00.000Z', end: '2030-03-01T18:30:00.000Z', max_lease_duration: '5d' });
  const table = await screen.findByRole('table');
  expect(within(table).getByRole('row', { name: /gpu-01/ }).textContent).toContain('5d');
});
