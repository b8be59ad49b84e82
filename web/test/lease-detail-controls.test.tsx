import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, json, meBody, PROJECT } from './fake-api';

// The lease page's controls for the lessee: the boot device of each node, the project by name, the new end in UTC.
const START = '2030-01-01T00:00:00.000Z';
const END = '2030-01-04T00:00:00.000Z';
const alloc = (node_id: string, node_name: string) => ({
  node_id, node_name, group: 0, state: 'active', step: null, last_error: null, start: START, end: END, leave_reason: null, replaces: null, failure: null,
});
const lease = (state = 'active', extra: Record<string, unknown> = {}) => ({
  id: 'l-1', name: 'training', project_id: PROJECT.id, project_name: PROJECT.name, state, start: START, end: END,
  request: { nodes: ['gpu-01', 'gpu-02'] }, replace_policy: 'auto', created_at: START, updated_at: START, auto_renew: null, notices: [],
  allocations: [alloc('n-1', 'gpu-01'), alloc('n-2', 'gpu-02')],
  ...extra,
});

function show(routes: Parameters<typeof fakeApi>[0]) {
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'GET /v1/nodes/:id': () => apiError(404, 'not_found', 'no node'),
    'GET /v1/nodes/:id/networks': () => apiError(409, 'not_configured', 'no networks here'),
    ...routes,
  });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path: '/leases/l-1' }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return api;
}

const nodeOf = (url: URL) => url.pathname.split('/')[3]!;

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test("the lease page names the lessee project, not only its id", async () => {
  show({ 'GET /v1/leases/:id': () => lease() });
  const project = await screen.findByText('Project', { selector: '.meta dt' });
  const value = project.nextElementSibling!;
  expect(value.textContent).toBe(PROJECT.name);
  expect(value.getAttribute('title')).toBe(PROJECT.id);
});

test('each leased node shows its boot device; the lessee sets another, for every boot, and reads it back', async () => {
  const user = userEvent.setup();
  const devices: Record<string, { boot_device: string | null; persistent: boolean }> = {
    'n-1': { boot_device: 'disk', persistent: true },
    'n-2': { boot_device: null, persistent: false },
  };
  const sent: unknown[] = [];
  show({
    'GET /v1/leases/:id': () => lease(),
    'GET /v1/nodes/:id/boot-device': (_r, url) => ({ node_id: nodeOf(url), ...devices[nodeOf(url)]! }),
    'POST /v1/nodes/:id/boot-device': async (req, url) => {
      const body = (await req.json()) as { device: string; persistent: boolean };
      sent.push({ node: nodeOf(url), ...body });
      devices[nodeOf(url)] = { boot_device: body.device, persistent: body.persistent };
      return json({ node_id: nodeOf(url), boot_device: body.device, persistent: body.persistent });
    },
  });
  const first = await screen.findByRole('form', { name: 'Boot device of gpu-01' });
  await waitFor(() => expect(first.textContent).toContain('Boot device: Disk, every boot'));
  const second = screen.getByRole('form', { name: 'Boot device of gpu-02' });
  await waitFor(() => expect(second.textContent).toContain('Boot device: not reported by the BMC'));

  await user.selectOptions(within(first).getByRole('combobox', { name: 'New boot device of gpu-01' }), 'PXE (network)');
  await user.click(within(first).getByRole('checkbox', { name: 'every boot' }));
  await user.click(within(first).getByRole('button', { name: 'Set boot device' }));
  expect((await within(first).findByRole('status')).textContent).toBe('gpu-01 boots from PXE (network), every boot.');
  expect(sent).toEqual([{ node: 'n-1', device: 'pxe', persistent: true }]);
  await waitFor(() => expect(first.textContent).toContain('Boot device: PXE (network), every boot'));
  // The other node is untouched.
  expect(second.textContent).toContain('not reported by the BMC');
});

test("a refused change is shown next to that node's boot device, and the device stays as it was", async () => {
  const user = userEvent.setup();
  show({
    'GET /v1/leases/:id': () => lease(),
    'GET /v1/nodes/:id/boot-device': (_r, url) => ({ node_id: nodeOf(url), boot_device: 'disk', persistent: false }),
    'POST /v1/nodes/:id/boot-device': () => apiError(409, 'node_locked', 'gpu-01 is locked by Ironic (another operation is running): try again'),
  });
  const first = await screen.findByRole('form', { name: 'Boot device of gpu-01' });
  await user.click(within(first).getByRole('button', { name: 'Set boot device' }));
  expect((await within(first).findByRole('alert')).textContent).toBe('gpu-01 is locked by Ironic (another operation is running): try again');
  expect(first.textContent).toContain('Boot device: Disk, next boot only');
  expect(within(screen.getByRole('form', { name: 'Boot device of gpu-02' })).queryByRole('alert')).toBeNull();
});

test('a boot device the policy does not let the caller read says why, inline', async () => {
  show({
    'GET /v1/leases/:id': () => lease(),
    'GET /v1/nodes/:id/boot-device': () => apiError(403, 'forbidden', 'policy baremetal:node:get_boot_device does not allow this'),
  });
  const first = await screen.findByRole('form', { name: 'Boot device of gpu-01' });
  await waitFor(() => expect(first.textContent).toContain('could not be read: policy baremetal:node:get_boot_device does not allow this'));
});

test('before the lease is active there is no boot device control', async () => {
  show({ 'GET /v1/leases/:id': () => lease('pending', { start: '2030-01-02T00:00:00.000Z' }) });
  await screen.findByRole('region', { name: 'Allocations' });
  expect(screen.queryByRole('form', { name: /^Boot device of/ })).toBeNull();
});

test('the new end is entered in UTC, with the local time beside it, and sent as that instant', async () => {
  const user = userEvent.setup();
  const patched: unknown[] = [];
  show({
    'GET /v1/leases/:id': () => lease(),
    'GET /v1/nodes/:id/boot-device': (_r, url) => ({ node_id: nodeOf(url), boot_device: 'disk', persistent: false }),
    'PATCH /v1/leases/:id': async (req) => {
      const body = (await req.json()) as { end: string };
      patched.push(body);
      return json(lease('active', { end: body.end }));
    },
  });
  const field = (await screen.findByLabelText('New end (UTC)')) as HTMLInputElement;
  // Prefilled a day after the current end, in UTC whatever the viewer's zone.
  expect(field.value).toBe('2030-01-05T00:00');
  await user.click(screen.getByRole('button', { name: '+1 hour' }));
  expect(field.value).toBe('2030-01-04T01:00');
  fireEvent.change(field, { target: { value: '2030-01-06T18:30' } });
  const hint = document.getElementById('lease-new-end-hint')!;
  expect(hint.textContent).toMatch(/^Your time: .+ \(.+\)$/);
  expect(hint.querySelector('time')!.getAttribute('datetime')).toBe('2030-01-06T18:30:00.000Z');
  await user.click(screen.getByRole('button', { name: 'Extend' }));
  expect(screen.getByText(/^Change the end to 2030-01-06 18:30 UTC \(.+ your time\)\?$/)).toBeTruthy();
  await user.click(screen.getByRole('button', { name: 'Yes, change it' }));
  await waitFor(() => expect(patched).toEqual([{ end: '2030-01-06T18:30:00.000Z' }]));
});
