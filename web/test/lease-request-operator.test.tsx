import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { fakeApi, json, meBody, PROJECT, type Handler } from './fake-api';

// Issue 17: the operator requests a lease for a project it picks; /leases/new is the form, never a lease "new".
const START = '2030-01-01T00:00:00.000Z';
const END = '2030-01-02T00:00:00.000Z';
const GEO = { id: '7d0c5d1e-0000-4000-8000-000000000002', name: 'geo' };
const projectRow = (p: { id: string; name: string }) => ({ ...p, description: '', quota: {}, notice_offsets: null, created_at: START, updated_at: START });
const LEASE = {
  id: 'b7e1a3c0-0000-4000-8000-000000000009', name: 'training', project_id: PROJECT.id, project_name: PROJECT.name, state: 'pending',
  start: START, end: END, request: { nodes: ['gpu-01'] }, replace_policy: 'auto', created_at: START, updated_at: START,
  auto_renew: null, notices: [], allocations: [],
};
const QUOTE = { start: START, end: END, duration: 'P1D', allocations: [{ node_id: 'n1', node_name: 'gpu-01', group: 0, group_number: 1 }] };

function open(path: string, role: 'admin' | 'member' | 'reader', routes: Record<string, Handler> = {}) {
  const quotes: Record<string, unknown>[] = [];
  const created: Record<string, unknown>[] = [];
  const api = fakeApi({
    'GET /v1/me': () => meBody(role),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'GET /v1/projects': () => ({ projects: [projectRow(GEO), projectRow(PROJECT)], next: null }),
    'GET /v1/leases/:id': () => LEASE,
    'POST /v1/leases/quote': async (req) => {
      quotes.push((await req.json()) as Record<string, unknown>);
      return json(QUOTE);
    },
    'POST /v1/leases': async (req) => {
      created.push((await req.json()) as Record<string, unknown>);
      return json({ ...LEASE, id: 'c0000000-0000-4000-8000-00000000000c' }, 201);
    },
    ...routes,
  });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  const location = memoryLocation({ path, record: true });
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={location.hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  const leaseReads = () => api.requests.filter((r) => r.method === 'GET' && /^\/v1\/leases\/[^/]+$/.test(new URL(r.url).pathname)).map((r) => new URL(r.url).pathname);
  return { api, location, quotes, created, leaseReads };
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('the operator at /leases/new gets the request form with a project picker listing the projects, none chosen, and asks for no lease "new"', async () => {
  const { leaseReads, quotes } = open('/leases/new', 'admin');
  expect(await screen.findByRole('heading', { name: 'Request a lease' })).toBeTruthy();
  const picker = (await screen.findByLabelText('Lease for project')) as HTMLSelectElement;
  await waitFor(() => expect(within(picker).getAllByRole('option').map((o) => o.textContent)).toEqual(['Choose a project…', 'geo', 'physics-lab']));
  expect(picker.value).toBe('');
  expect(screen.getByText('Choose the project the lease is for.')).toBeTruthy();
  expect(within(screen.getByRole('navigation', { name: 'Main' })).getByRole('link', { name: 'Request a lease' })).toBeTruthy();
  expect(leaseReads()).toEqual([]);
  expect(quotes).toEqual([]);
});

test('the operator’s quote and lease are for the project it picks, and the new lease opens', async () => {
  const user = userEvent.setup();
  const { quotes, created, location } = open('/leases/new', 'admin');
  const picker = await screen.findByLabelText('Lease for project');
  await waitFor(() => expect(within(picker).getAllByRole('option')).toHaveLength(3));
  await user.selectOptions(picker, 'geo');
  await user.type(screen.getByLabelText('Group 1 Requirement expression'), 'gpus >= 1');
  await screen.findByRole('list', { name: 'Nodes that would be picked' });
  expect(quotes.at(-1)).toEqual({ project: GEO.id, groups: [{ count: 1, where: 'gpus >= 1' }], duration: '1d' });
  await user.click(screen.getByRole('button', { name: 'Request lease' }));
  await waitFor(() => expect(created).toEqual([{ project: GEO.id, groups: [{ count: 1, where: 'gpus >= 1' }], duration: '1d' }]));
  await waitFor(() => expect(location.history.at(-1)).toBe('/leases/c0000000-0000-4000-8000-00000000000c'));
});

test('a project member gets the form without a picker: its leases are its project’s', async () => {
  const user = userEvent.setup();
  const { quotes, api } = open('/leases/new', 'member');
  await user.type(await screen.findByLabelText('Group 1 Requirement expression'), 'gpus >= 1');
  await screen.findByRole('list', { name: 'Nodes that would be picked' });
  expect(screen.queryByLabelText('Lease for project')).toBeNull();
  expect(quotes).toEqual([{ groups: [{ count: 1, where: 'gpus >= 1' }], duration: '1d' }]);
  expect(api.requests.some((r) => new URL(r.url).pathname === '/v1/projects')).toBe(false);
});

test('a lease id still opens the lease page, for the operator and a member alike', async () => {
  for (const role of ['admin', 'member'] as const) {
    const { leaseReads } = open(`/leases/${LEASE.id}`, role);
    expect(await screen.findByRole('heading', { name: /training/ })).toBeTruthy();
    expect(screen.queryByRole('heading', { name: 'Request a lease' })).toBeNull();
    expect(leaseReads()).toContain(`/v1/leases/${LEASE.id}`);
    cleanup();
    sessionStorage.clear();
  }
});

test('a reader at /leases/new is told the page is not for it, and no lease "new" is asked for', async () => {
  const { leaseReads } = open('/leases/new', 'reader');
  expect(await screen.findByRole('heading', { name: 'Page not found' })).toBeTruthy();
  expect(leaseReads()).toEqual([]);
});
