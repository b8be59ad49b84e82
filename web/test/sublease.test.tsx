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
const linked = (lease_id: string, project_name: string, start: string, end: string) => ({
  lease_id, lease_name: `${project_name}-lease`, project_id: `p-${project_name}`, project_name, start, end, state: 'active',
});
const alloc = (node_id: string, node_name: string, extra: Record<string, unknown> = {}) => ({
  node_id, node_name, group: 0, state: 'active', step: null, last_error: null, start: START, end: END, leave_reason: null, replaces: null, failure: null,
  sublease_of: null, subleases: [], ...extra,
});
const lease = (allocations: ReturnType<typeof alloc>[]) => ({
  id: 'l-1', name: 'training', project_id: PROJECT.id, project_name: PROJECT.name, state: 'active', start: START, end: END,
  request: { nodes: ['gpu-01'] }, allocations, replace_policy: 'auto', created_at: START, updated_at: START,
});
const node = (id: string, name: string, lease: Record<string, unknown> | null = null) => ({
  id, name, owner: 'p-owner', owner_project: { id: 'p-owner', name: 'hpc' }, lessee: PROJECT.id, facts: {}, traits: [], properties: {}, resource_class: null,
  power_state: 'power on', provision_state: 'active', target_provision_state: null, maintenance: false, maintenance_reason: null, last_error: null,
  console_enabled: false, quarantined: false, quarantine_reason: null, lease, synced_at: START,
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

test('the lease page shows to whom a node is sub-leased and when, and which lease a sub-leased node comes from', async () => {
  show('/leases/l-1', {
    'GET /v1/leases/:id': () =>
      lease([
        alloc('n-1', 'gpu-01', { subleases: [linked('l-9', 'geo', '2030-01-02T00:00:00.000Z', '2030-01-03T00:00:00.000Z')] }),
        alloc('n-2', 'gpu-02', { sublease_of: linked('l-0', 'astro', START, END) }),
      ]),
    'GET /v1/nodes/:id': (_r, url) => node(url.pathname.split('/').pop()!, 'x'),
  });
  const table = await screen.findByRole('region', { name: 'Allocations' });
  const rows = within(table).getAllByRole('row');
  expect(rows[1]!.textContent).toMatch(/Sub-leased to geo \(geo-lease, active\) from .* to .*: no access for you meanwhile/);
  expect(within(rows[1]!).getByRole('link', { name: 'geo-lease' }).getAttribute('href')).toBe('/leases/l-9');
  expect(rows[2]!.textContent).toMatch(/Sub-leased from astro-lease of astro, which holds it until/);
  // One level: a node held through a sub-lease is not offered on.
  expect(within(rows[1]!).getByText('Offer to another project')).toBeTruthy();
  expect(within(rows[2]!).queryByText('Offer to another project')).toBeNull();
});

test("a lessee offers a node to another project until an instant; outside its lease, the server's rule is shown", async () => {
  const user = userEvent.setup();
  let outside = true;
  const api = show('/leases/l-1', {
    'GET /v1/leases/:id': () => lease([alloc('n-1', 'gpu-01')]),
    'GET /v1/nodes/:id': (_r, url) => node(url.pathname.split('/').pop()!, 'x'),
    'POST /v1/offers': async (req) => {
      const body = (await req.json()) as { end: string };
      if (outside) return apiError(409, 'policy_violation', 'a sub-offer must lie within your lease on the node: from 2030-01-01T00:00:00.000Z to 2030-01-04T00:00:00.000Z at the latest (rule sublease_within_lease)', { rule: 'sublease_within_lease' });
      return { id: 'o-1', node_id: 'n-1', end: body.end, sublease_of: 'l-1' };
    },
  });
  const table = await screen.findByRole('region', { name: 'Allocations' });
  await user.click(within(table).getByText('Offer to another project'));
  await user.type(within(table).getByLabelText('Project'), 'geo');
  await user.type(within(table).getByLabelText('Until (UTC)'), '2030-01-05T00:00');
  await user.click(within(table).getByRole('button', { name: 'Offer gpu-01' }));
  expect((await screen.findByText(/rule sublease_within_lease/)).closest('[role="alert"]')).not.toBeNull();
  outside = false;
  await user.clear(within(table).getByLabelText('Until (UTC)'));
  await user.type(within(table).getByLabelText('Until (UTC)'), '2030-01-03T00:00');
  await user.click(within(table).getByRole('button', { name: 'Offer gpu-01' }));
  expect((await screen.findByRole('status')).textContent).toMatch(/^gpu-01 offered to geo until /);
  const posts = api.requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/offers');
  expect(await posts[1]!.json()).toEqual({ node_id: 'n-1', allowed_projects: ['geo'], end: '2030-01-03T00:00:00.000Z' });
});

test('the node page says which lease a current sub-lease comes from', async () => {
  show('/nodes/n-1', {
    'GET /v1/nodes/:id': () => node('n-1', 'gpu-01', { id: 'l-9', project_id: PROJECT.id, end: '2030-01-03T00:00:00.000Z', sublease_of: linked('l-0', 'astro', START, END) }),
  });
  await screen.findByRole('heading', { name: 'gpu-01' });
  expect(screen.getByText('Sub-leased from')).toBeTruthy();
  expect(screen.getByRole('link', { name: 'astro-lease' }).getAttribute('href')).toBe('/leases/l-0');
});
