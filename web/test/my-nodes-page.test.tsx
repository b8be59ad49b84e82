import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { fakeApi, meBody, PROJECT } from './fake-api';

const alloc = (node_id: string, node_name: string) => ({ node_id, node_name, group: 0, state: 'reserved', step: null, last_error: null });
const lease = (id: string, state: string, end: string, project_name: string, allocations = [alloc('n-1', 'gpu-01')]) => ({
  id,
  name: `lease-${id}`,
  project_id: `p-${project_name}`,
  project_name,
  state,
  start: '2030-01-01T00:00:00.000Z',
  end,
  request: {},
  allocations,
  created_at: '2030-01-01T00:00:00.000Z',
  updated_at: '2030-01-01T00:00:00.000Z',
});
const BY_STATE: Record<string, unknown[]> = {
  active: [lease('a', 'active', '2030-01-05T00:00:00.000Z', 'astro', [alloc('n-1', 'gpu-01'), alloc('n-9', 'elsewhere-01')])],
  pending: [lease('b', 'pending', '2030-01-03T00:00:00.000Z', 'geo')],
  ending: [],
};

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('who leases my nodes: asked by owner and state, lessee named, first to end on top, only my nodes listed', async () => {
  sessionStorage.setItem('leasehold.token', 'lh_t');
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [{ id: 'n-1', name: 'gpu-01', owner_project: PROJECT }], next: null }),
    'GET /v1/leases': (_req, url) => ({ leases: BY_STATE[url.searchParams.get('state') ?? ''] ?? [], next: null }),
  });
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path: '/my-nodes' }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  const table = await screen.findByRole('table');
  const rows = within(table).getAllByRole('row').slice(1);
  expect(rows.map((r) => within(r).getByRole('rowheader').textContent)).toEqual(['geo', 'astro']);
  expect(rows[1]!.textContent).toContain('gpu-01');
  expect(rows[1]!.textContent).not.toContain('elsewhere-01');
  const asked = api.requests.map((r) => new URL(r.url)).filter((u) => u.pathname === '/v1/leases');
  expect(asked.map((u) => u.searchParams.get('state')).sort()).toEqual(['active', 'ending', 'pending']);
  expect(asked.every((u) => u.searchParams.get('owner') === PROJECT.id)).toBe(true);
});
