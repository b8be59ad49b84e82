import { cleanup, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, meBody, PROJECT } from './fake-api';

afterEach(cleanup);

const START = '2030-01-01T00:00:00.000Z';
const END = '2030-01-04T00:00:00.000Z';
const alloc = (node_id: string, node_name: string, extra: Record<string, unknown> = {}) => ({
  node_id, node_name, group: 0, state: 'active', step: null, last_error: null, start: START, end: END, leave_reason: null, replaces: null, failure: null, ...extra,
});
const lease = (allocations: ReturnType<typeof alloc>[], replace_policy = 'auto') => ({
  id: 'l-1', name: 'training', project_id: PROJECT.id, project_name: PROJECT.name, state: 'active', start: START, end: END,
  request: { groups: [{ count: 2, where: 'gpus >= 1' }] }, allocations, replace_policy, created_at: START, updated_at: START,
});
const node = (id: string, name: string, owner_project: { id: string; name: string } = { id: 'p-owner', name: 'hpc' }) => ({
  id, name, owner: owner_project.id, owner_project, lessee: PROJECT.id, facts: {}, traits: [], properties: {}, resource_class: null,
  power_state: 'power on', provision_state: 'active', target_provision_state: null, maintenance: false, maintenance_reason: null, last_error: null,
  console_enabled: false, quarantined: false, quarantine_reason: null, lease: null, synced_at: START,
});

function show(path: string, routes: Parameters<typeof fakeApi>[0]) {
  const api = fakeApi({ 'GET /v1/me': () => meBody('member'), 'GET /v1/nodes': () => ({ nodes: [], next: null }), 'GET /v1/nodes/:id/networks': () => apiError(409, 'not_configured', 'no networks here'), ...routes });
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

test('the lease page says which node replaced which, when, and what failed', async () => {
  const current = lease([
    alloc('n-1', 'gpu-01', { state: 'releasing', step: 'clean', leave_reason: 'replaced', end: '2030-01-02T00:00:00.000Z' }),
    alloc('n-3', 'gpu-03', { replaces: 'n-1', start: '2030-01-02T00:00:00.000Z' }),
    alloc('n-2', 'gpu-02', { failure: 'in maintenance: fan failure' }),
  ], 'never');
  show('/leases/l-1', { 'GET /v1/leases/:id': () => current, 'GET /v1/nodes/:id': (_r, url) => node(url.pathname.split('/').pop()!, 'x') });
  const table = await screen.findByRole('region', { name: 'Allocations' });
  const rows = within(table).getAllByRole('row');
  expect(rows[1]!.textContent).toMatch(/Replaced .* by gpu-03/);
  expect(within(rows[1]!).queryByRole('button', { name: 'Replace' })).toBeNull();
  expect(rows[2]!.textContent).toContain('Replaces gpu-01 since');
  expect(rows[3]!.textContent).toContain('Failed: in maintenance: fan failure');
  expect((screen.getByRole('combobox', { name: 'When a node fails' }) as HTMLSelectElement).value).toBe('never');
});

test('a lessee replaces a misbehaving node after confirming, and hears which node took its place', async () => {
  const user = userEvent.setup();
  let current = lease([alloc('n-1', 'gpu-01'), alloc('n-2', 'gpu-02')]);
  const api = show('/leases/l-1', {
    'GET /v1/leases/:id': () => current,
    'GET /v1/nodes/:id': (_r, url) => node(url.pathname.split('/').pop()!, 'x'),
    'POST /v1/leases/:id/allocations/:node/replace': () => {
      current = lease([alloc('n-1', 'gpu-01', { state: 'releasing', leave_reason: 'replaced' }), alloc('n-2', 'gpu-02'), alloc('n-3', 'gpu-03', { state: 'reserved', replaces: 'n-1' })]);
      return current;
    },
  });
  const table = await screen.findByRole('region', { name: 'Allocations' });
  const first = within(table).getAllByRole('row')[1]!;
  await user.click(within(first).getByRole('button', { name: 'Replace' }));
  expect(screen.getByText(/Swap gpu-01 for an equivalent free node\? Your access to gpu-01 ends now/)).toBeTruthy();
  await user.click(screen.getByRole('button', { name: 'Replace it' }));
  expect((await screen.findByRole('status')).textContent).toBe('gpu-01 is replaced by gpu-03; gpu-01 is being wiped.');
  expect(api.requests.some((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/leases/l-1/allocations/n-1/replace')).toBe(true);
});

test("no substitute: the server's reason is shown and the lease keeps its node", async () => {
  const user = userEvent.setup();
  show('/leases/l-1', {
    'GET /v1/leases/:id': () => lease([alloc('n-1', 'gpu-01'), alloc('n-2', 'gpu-02')]),
    'GET /v1/nodes/:id': (_r, url) => node(url.pathname.split('/').pop()!, 'x'),
    'POST /v1/leases/:id/allocations/:node/replace': () => apiError(409, 'lease_unavailable', 'no equivalent node is free until 2030-01-04: 0 of 3 matching nodes are free'),
  });
  const table = await screen.findByRole('region', { name: 'Allocations' });
  await user.click(within(within(table).getAllByRole('row')[2]!).getByRole('button', { name: 'Replace' }));
  await user.click(screen.getByRole('button', { name: 'Replace it' }));
  expect((await screen.findByText(/no equivalent node is free until 2030-01-04/)).closest('[role="alert"]')).not.toBeNull();
  expect(within(table).getAllByRole('row')[2]!.textContent).not.toContain('Replaced');
});

test('giving back the last node warns that it ends the lease, and sends the DELETE for that node', async () => {
  const user = userEvent.setup();
  const api = show('/leases/l-1', {
    'GET /v1/leases/:id': () => lease([alloc('n-1', 'gpu-01', { leave_reason: 'returned', state: 'releasing' }), alloc('n-2', 'gpu-02')]),
    'GET /v1/nodes/:id': (_r, url) => node(url.pathname.split('/').pop()!, 'x'),
    'DELETE /v1/leases/:id/allocations/:node': () => ({ ...lease([alloc('n-2', 'gpu-02', { state: 'releasing' })]), state: 'ending' }),
  });
  const table = await screen.findByRole('region', { name: 'Allocations' });
  const rows = within(table).getAllByRole('row');
  expect(rows[1]!.textContent).toMatch(/Given back/);
  await user.click(within(rows[2]!).getByRole('button', { name: 'Give back' }));
  expect(screen.getByText('gpu-02 is the last node: giving it back ends the lease now. Go ahead?')).toBeTruthy();
  await user.click(screen.getByRole('button', { name: 'Give it back' }));
  expect((await screen.findByRole('status')).textContent).toBe('That was the last node: the lease is ending.');
  expect(api.requests.filter((r) => r.method === 'DELETE').map((r) => new URL(r.url).pathname)).toEqual(['/v1/leases/l-1/allocations/n-2']);
});

test("the lease's replace policy changes from its page", async () => {
  const user = userEvent.setup();
  let current = lease([alloc('n-1', 'gpu-01')]);
  const patched: unknown[] = [];
  show('/leases/l-1', {
    'GET /v1/leases/:id': () => current,
    'GET /v1/nodes/:id': (_r, url) => node(url.pathname.split('/').pop()!, 'x'),
    'PATCH /v1/leases/:id': async (req) => {
      const body = (await req.json()) as { replace: string };
      patched.push(body);
      current = lease([alloc('n-1', 'gpu-01')], body.replace);
      return current;
    },
  });
  await user.selectOptions(await screen.findByRole('combobox', { name: 'When a node fails' }), 'ask');
  expect((await screen.findByRole('status')).textContent).toContain('Saved: Tell us; we ask for a substitute (ask).');
  expect(patched).toEqual([{ replace: 'ask' }]);
});

test("the owner takes a node back at a time; too early, the server's rule is shown", async () => {
  const user = userEvent.setup();
  let early = true;
  const api = show('/nodes/n-9', {
    'GET /v1/nodes/:id': () => node('n-9', 'gpu-09', PROJECT),
    'POST /v1/nodes/:id/reclaim': async (req) => {
      const { at } = (await req.json()) as { at: string };
      if (early) return apiError(409, 'policy_violation', 'lease l-7 was booked with a reclaim notice of P1D: the earliest is 2030-01-02T00:00:00.000Z');
      return { node_id: 'n-9', at, leases: [{ lease_id: 'l-7', substitute: 'n-10' }] };
    },
  });
  await screen.findByRole('heading', { name: 'Take this node back' });
  await user.type(screen.getByLabelText('Leaves its leases at (UTC)'), '2030-01-01T12:00');
  await user.click(screen.getByRole('button', { name: 'Take it back' }));
  await user.click(screen.getByRole('button', { name: 'Take it back' }));
  expect((await screen.findByText(/the earliest is 2030-01-02T00:00:00.000Z/)).closest('[role="alert"]')).not.toBeNull();
  early = false;
  await user.click(screen.getByRole('button', { name: 'Take it back' }));
  await user.click(screen.getByRole('button', { name: 'Take it back' }));
  expect((await screen.findByRole('status')).textContent).toMatch(/gpu-09 leaves its lease at .*; each lease is told\./);
  expect(screen.getByText(/continues on/)).toBeTruthy();
  const posts = api.requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/nodes/n-9/reclaim');
  expect(posts).toHaveLength(2);
  expect(await posts[1]!.json()).toEqual({ at: '2030-01-01T12:00:00.000Z' });
});

test('a lessee viewing the node it leases is not offered to take it back', async () => {
  show('/nodes/n-1', { 'GET /v1/nodes/:id': () => node('n-1', 'gpu-01') });
  await screen.findByRole('heading', { name: 'gpu-01' });
  expect(screen.queryByRole('heading', { name: 'Take this node back' })).toBeNull();
});
