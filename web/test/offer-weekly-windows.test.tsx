import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, meBody, PROJECT } from './fake-api';

const NODE = { id: 'n-1', name: 'gpu-01', owner: 'physics-lab', owner_project: PROJECT, facts: {}, traits: [], provision_state: 'available' };
const BAD_RULE = 'weekly: "someday" is not a weekly rule; write DAYS [HH:MM-HH:MM], e.g. "mon-fri 18:00-08:00" or "sat-sun"';

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
      const weekly = body.weekly as string[] | undefined;
      if (weekly?.includes('someday')) return apiError(400, 'invalid_request', BAD_RULE, { field: 'weekly' });
      const created = {
        id: 'o-1', node_id: 'n-1', node_name: 'gpu-01', project_id: PROJECT.id, start: '2030-01-01T00:00:00.000Z', end: null,
        max_lease_duration: null, min_lease_duration: null, allowed_projects: null, status: 'active', created_at: '2030-01-01T00:00:00.000Z',
        withdrawn_at: null, free_windows: [{ start: '2030-01-01T17:00:00.000Z', end: '2030-01-02T07:00:00.000Z' }],
        weekly: ['mon-fri 18:00-08:00', 'sat-sun 00:00-24:00'],
        timezone: body.timezone ?? 'UTC',
        weekly_summary: `Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (${String(body.timezone ?? 'UTC')})`,
      };
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
  return { posted };
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('weekly windows are typed as rules separated by semicolons, sent with their timezone, and summarised in the list', async () => {
  const user = userEvent.setup();
  const { posted } = setup();
  await user.type(await screen.findByLabelText('Weekly windows'), 'mon-fri 18:00-08:00; sat-sun');
  await user.type(screen.getByLabelText('Timezone'), 'Europe/Berlin');
  await user.click(screen.getByRole('button', { name: 'Offer node' }));
  expect(await screen.findByText(/gpu-01 is offered/)).toBeTruthy();
  expect(posted.at(-1)).toEqual({ node_id: 'n-1', weekly: ['mon-fri 18:00-08:00', 'sat-sun'], timezone: 'Europe/Berlin' });
  const table = await screen.findByRole('table');
  const row = within(table).getByRole('row', { name: /gpu-01/ });
  expect(row.textContent).toContain('Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (Europe/Berlin)');
});

test('a timezone without rules is not sent, and a bad rule is marked on the weekly field', async () => {
  const user = userEvent.setup();
  const { posted } = setup();
  await user.type(await screen.findByLabelText('Timezone'), 'Europe/Berlin');
  await user.click(screen.getByRole('button', { name: 'Offer node' }));
  await waitFor(() => expect(posted).toHaveLength(1));
  expect(posted[0]).toEqual({ node_id: 'n-1' });

  const field = screen.getByLabelText('Weekly windows');
  await user.type(field, 'someday');
  await user.click(screen.getByRole('button', { name: 'Offer node' }));
  await waitFor(() => expect(field.getAttribute('aria-invalid')).toBe('true'));
  expect(screen.getByText(BAD_RULE)).toBeTruthy();
});
