import { cleanup, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, meBody } from './fake-api';

const node = (id: string, name: string, facts: Record<string, number | string>, traits: string[] = []) => ({
  id, name, resource_class: 'baremetal', owner: 'physics-lab', owner_project: { id: 'p1', name: 'physics-lab' }, lessee: null,
  facts, properties: {}, traits, power_state: 'power off', provision_state: 'available', target_provision_state: null,
  maintenance: false, maintenance_reason: null, last_error: null, console_enabled: false, synced_at: '2030-01-01T00:00:00Z',
});
const NODES = [
  node('n1', 'gpu-01', { memory: 64 * 2 ** 30, disk: 480e9, cpus: 32, gpus: 1, cpu_arch: 'x86_64' }, ['CUSTOM_GPU_A100']),
  node('n2', 'cpu-01', { memory: 32 * 2 ** 30, disk: 240e9, cpus: 16, gpus: 0, cpu_arch: 'aarch64' }),
];
// The API's own wording (src/domain/expression): the UI must show it as is.
const BAD = 'invalid where: expected a comparison operator at position 7 ("memory >>= 1")';

function setup() {
  const api = fakeApi({
    'GET /v1/me': () => meBody('admin'),
    'GET /v1/nodes': (_req, url) => {
      const where = url.searchParams.get('where');
      if (where === 'memory >>= 1') return apiError(400, 'invalid_request', BAD, { field: 'where' });
      return { nodes: where ? NODES.filter((n) => n.id === 'n1') : NODES, next: null };
    },
    'GET /v1/leases': () => ({ leases: [], next: null }),
    'GET /v1/offers': (_req, url) => {
      const where = url.searchParams.get('where');
      if (where === 'memory >>= 1') return apiError(400, 'invalid_request', BAD, { field: 'where' });
      return { offers: [{ id: 'o1', node_id: 'n1', node_name: 'gpu-01', status: 'active' }], next: null };
    },
  });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path: '/nodes' }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return api;
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('the table shows names, facts in units, traits, owner and state', async () => {
  setup();
  const table = await screen.findByRole('table');
  const row = within(table).getByRole('row', { name: /gpu-01/ });
  expect(row.textContent).toContain('64 GiB');
  expect(row.textContent).toContain('480 GB');
  expect(row.textContent).toContain('CUSTOM_GPU_A100');
  expect(row.textContent).toContain('physics-lab');
  expect(row.textContent).toContain('available');
});

test('a bad expression shows the API’s message verbatim, marked on the field', async () => {
  const user = userEvent.setup();
  setup();
  await screen.findByRole('table');
  const box = screen.getByLabelText('Requirement expression');
  await user.type(box, 'memory >>= 1{Enter}');
  const alert = await screen.findByRole('alert');
  expect(alert.textContent).toBe(BAD);
  expect(box.getAttribute('aria-invalid')).toBe('true');
});

test('a good expression is sent as the where parameter and filters the table', async () => {
  const user = userEvent.setup();
  const api = setup();
  await screen.findByRole('table');
  await user.type(screen.getByLabelText('Requirement expression'), 'gpus >= 1 and has CUSTOM_GPU_A100');
  await user.click(screen.getByRole('button', { name: 'Apply' }));
  await screen.findByText(/1 of 2 nodes/);
  const sent = api.requests.map((r) => new URL(r.url)).filter((u) => u.searchParams.has('where'));
  expect(sent.map((u) => `${u.pathname} ${u.searchParams.get('where')}`).sort()).toEqual([
    '/v1/nodes gpus >= 1 and has CUSTOM_GPU_A100',
    '/v1/offers gpus >= 1 and has CUSTOM_GPU_A100',
  ]);
  expect(screen.queryByRole('row', { name: /cpu-01/ })).toBeNull();
  expect(screen.getByRole('row', { name: /gpu-01/ })).toBeTruthy();
});

test('the search box filters by name, arch or trait', async () => {
  const user = userEvent.setup();
  setup();
  await screen.findByRole('table');
  await user.type(screen.getByLabelText('Search'), 'aarch64');
  expect(screen.queryByRole('row', { name: /gpu-01/ })).toBeNull();
  expect(screen.getByRole('row', { name: /cpu-01/ })).toBeTruthy();
});
