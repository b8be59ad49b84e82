import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, meBody, PROJECT } from './fake-api';

const START = '2030-01-01T00:00:00.000Z';
const END = '2030-01-04T00:00:00.000Z';
const lease = (extra: Record<string, unknown> = {}) => ({
  id: 'l-1', name: 'training', project_id: PROJECT.id, project_name: PROJECT.name, state: 'active', start: START, end: END,
  request: { nodes: ['gpu-01'] }, replace_policy: 'auto', created_at: START, updated_at: START, auto_renew: null,
  allocations: [{ node_id: 'n-1', node_name: 'gpu-01', group: 0, state: 'active', step: null, last_error: null, start: START, end: END, leave_reason: null, replaces: null, failure: null }],
  notices: [
    { offset: 'P1D', at: '2030-01-03T00:00:00.000Z', sent_at: '2030-01-03T00:00:02.000Z' },
    { offset: 'PT1H', at: '2030-01-03T23:00:00.000Z', sent_at: null },
  ],
  ...extra,
});

function show(path: string, routes: Parameters<typeof fakeApi>[0]) {
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'GET /v1/nodes/:id': () => apiError(404, 'not_found', 'no node'),
    ...routes,
  });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return api;
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('the lease page says which notices were sent and which are to come, and why auto-renew stopped', async () => {
  show('/leases/l-1', {
    'GET /v1/leases/:id': () =>
      lease({ auto_renew: { step: 'P1D', until: '2030-01-10T00:00:00.000Z', state: 'stopped', rule: 'next_booking', message: 'cannot renew past 2030-01-04T00:00:00.000Z' } }),
  });
  const list = await screen.findByRole('list', { name: 'Notices before the end' });
  const items = within(list).getAllByRole('listitem');
  expect(items[0]!.textContent).toMatch(/^1d before the end: sent /);
  expect(items[1]!.textContent).toMatch(/^1h before the end: to come, /);
  expect(screen.getByRole('note').textContent).toContain('stopped by the next lease on the node: cannot renew past');
});

test('a lessee turns auto-renew on with a step and a total, and asks how far the lease could be extended', async () => {
  const user = userEvent.setup();
  let current = lease();
  const patched: unknown[] = [];
  show('/leases/l-1', {
    'GET /v1/leases/:id': () => current,
    'PATCH /v1/leases/:id': async (req) => {
      const body = (await req.json()) as { auto_renew: { step: string } };
      patched.push(body);
      current = lease({ auto_renew: { step: body.auto_renew.step, until: '2030-01-15T00:00:00.000Z', state: 'on', rule: null, message: null } });
      return current;
    },
    'GET /v1/leases/:id/extension': () => ({
      lease_id: 'l-1', end: END, extendable: false, latest_end: END, max_extension: 'PT0S', auto_renew: null,
      limited_by: { rule: 'extension_window', node_id: 'n-1', node_name: 'gpu-01' }, window: { open: false, opens_at: '2030-01-02T00:00:00.000Z' },
    }),
  });
  const form = await screen.findByRole('form', { name: 'Auto-renew' });
  await user.clear(within(form).getByLabelText('Step'));
  await user.type(within(form).getByLabelText('Step'), '12h');
  await user.click(within(form).getByRole('button', { name: 'Turn auto-renew on' }));
  await waitFor(() => expect(patched).toEqual([{ auto_renew: { step: '12h', max_total: 'P14D' } }]));
  expect(await screen.findByText(/Auto-renew on: \+12h at a time until/)).toBeTruthy();

  await user.click(screen.getByRole('button', { name: 'How far can it be extended?' }));
  const answer = await screen.findByText(/Not now, limited by the offer's extension window \(gpu-01\); the extension window opens/);
  expect(answer).toBeTruthy();
});
