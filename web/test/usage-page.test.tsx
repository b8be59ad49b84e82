import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { monthWindow } from '../src/pages/usage-page';
import { fakeApi, meBody, PROJECT } from './fake-api';

const group = (key: string, name: string, node_hours: number, allocations: number, charges: Array<{ currency: string; amount: string }> = []) => ({
  key,
  name,
  node_hours,
  node_seconds: node_hours * 3600,
  allocations,
  charges,
});
const usageBody = (url: URL) => ({
  from: url.searchParams.get('from'),
  to: url.searchParams.get('to'),
  as_of: '2030-01-20T00:00:00.000Z',
  group_by: url.searchParams.get('group_by'),
  groups: [group('p-astro', 'astro', 30, 3, [{ currency: 'EUR', amount: '75.00' }]), group('p-geo', 'geo', 6, 1)],
  total: group('', '', 36, 4, [{ currency: 'EUR', amount: '75.00' }]),
  days: [
    { date: '2030-01-01', node_hours: { 'p-astro': 24, 'p-geo': 6 } },
    { date: '2030-01-02', node_hours: { 'p-astro': 6 } },
  ],
});

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

function renderAt(path: string, api: ReturnType<typeof fakeApi>) {
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
}

test('a month is its UTC calendar month', () => {
  expect(monthWindow('2030-12')).toEqual({ from: '2030-12-01T00:00:00.000Z', to: '2031-01-01T00:00:00.000Z' });
});

test("an owner switches to its nodes' use: the table lists each lessee with node-hours and charges, and the chart stacks each day", async () => {
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [{ id: 'n-1', name: 'gpu-01', owner_project: PROJECT }], next: null }),
    'GET /v1/usage': (_req, url) => usageBody(url),
  });
  renderAt('/usage', api);
  fireEvent.change(await screen.findByLabelText('Whose use'), { target: { value: 'my-nodes' } });
  await waitFor(() => expect(api.requests.some((r) => new URL(r.url).searchParams.get('owner') === PROJECT.id)).toBe(true));

  const table = await screen.findByRole('table');
  const rows = within(table).getAllByRole('row').slice(1);
  expect(rows.map((r) => [...r.children].map((c) => c.textContent))).toEqual([
    ['astro', '30.00', '3', '75.00 EUR'],
    ['geo', '6.00', '1', '—'],
    ['Total', '36.00', '4', '75.00 EUR'],
  ]);
  const chart = screen.getByRole('img', { name: 'Node-hours per day' });
  const first = chart.querySelector('[data-date="2030-01-01"]')!;
  expect([...first.querySelectorAll('rect')].map((r) => [r.getAttribute('data-group'), Number(r.getAttribute('height')).toFixed(1)])).toEqual([
    ['p-astro', (190 * 24 / 30).toFixed(1)],
    ['p-geo', (190 * 6 / 30).toFixed(1)],
  ]);
  expect(within(screen.getByRole('list', { name: 'Legend' })).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['astro', 'geo']);
});

test('the operator sees everyone without an owner filter and changes the grouping and the month', async () => {
  const api = fakeApi({
    'GET /v1/me': () => meBody('admin'),
    'GET /v1/usage': (_req, url) => usageBody(url),
  });
  renderAt('/usage', api);
  await screen.findByRole('table');
  expect(screen.queryByLabelText('Whose use')).toBeNull();
  fireEvent.change(screen.getByLabelText('Group by'), { target: { value: 'resource_class' } });
  fireEvent.change(screen.getByLabelText('Month (UTC)'), { target: { value: '2030-02' } });
  await waitFor(() => {
    const last = new URL(api.requests.filter((r) => r.url.includes('/v1/usage')).at(-1)!.url);
    expect(Object.fromEntries(last.searchParams)).toEqual({ from: '2030-02-01T00:00:00.000Z', to: '2030-03-01T00:00:00.000Z', group_by: 'resource_class' });
  });
  expect(await screen.findByRole('columnheader', { name: 'Resource class' })).toBeTruthy();
});
