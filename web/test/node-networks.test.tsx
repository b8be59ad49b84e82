import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, meBody, PROJECT } from './fake-api';

afterEach(cleanup);

const NODE = {
  id: 'n-1', name: 'gpu-01', owner: 'physics-lab', owner_project: PROJECT, lessee: null, facts: { cpus: 32 }, traits: [], properties: {},
  resource_class: 'baremetal.gpu', power_state: 'power off', provision_state: 'active', target_provision_state: null, maintenance: false,
  maintenance_reason: null, last_error: null, console_enabled: false, quarantined: false, quarantine_reason: null, lease: null, synced_at: '2030-01-01T00:00:00Z',
};
const NETS = [
  { id: 'net-lab', name: 'lab', project_id: PROJECT.id, shared: false, network_type: 'vlan', physical_network: 'physnet1', vlan: 142, status: 'ACTIVE' },
  { id: 'net-store', name: 'storage', project_id: PROJECT.id, shared: false, network_type: 'vlan', physical_network: 'physnet1', vlan: 143, status: 'ACTIVE' },
];
const attachment = {
  id: 'att-1', node_id: 'n-1', nic: { id: 'p-1', mac: '52:54:00:00:00:01' }, port_id: 'port-1', project_id: PROJECT.id,
  network: { id: 'net-lab', name: 'lab', network_type: 'vlan', physical_network: 'physnet1', vlan: 142 }, state: 'attached', binding: 'bound',
  port_status: 'ACTIVE', port_created: true, lease_id: null, trunk: null, created_by: 'alice', created_at: '2030-01-01T00:00:00Z', ended_at: null, last_error: null,
};

function setup(networks: 'on' | 'off' = 'on') {
  let attached = false;
  const posted: unknown[] = [];
  const deleted: string[] = [];
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [NODE], next: null }),
    'GET /v1/nodes/:id': () => NODE,
    'GET /v1/networks': () => (networks === 'off' ? apiError(409, 'not_configured', 'tenant networks are not configured here') : { networks: NETS }),
    'GET /v1/nodes/:id/networks': () =>
      networks === 'off'
        ? apiError(409, 'not_configured', 'tenant networks are not configured here')
        : {
            node_id: 'n-1',
            nics: [
              { id: 'p-1', mac: '52:54:00:00:00:01', physical_network: 'physnet1', in_use: attached, attachment: attached ? attachment : null },
              { id: 'p-2', mac: '52:54:00:00:00:02', physical_network: 'physnet1', in_use: true, attachment: null },
            ],
          },
    'POST /v1/nodes/:id/networks': async (req) => {
      posted.push(await req.json());
      attached = true;
      return attachment;
    },
    'DELETE /v1/nodes/:id/networks/:attachment': (req) => {
      deleted.push(new URL(req.url).pathname);
      attached = false;
      return { ...attachment, state: 'detached' };
    },
  });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path: '/nodes/n-1' }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return { posted, deleted };
}

test("the node page shows each NIC with its network and VLAN, another project's in-use NIC without details", async () => {
  setup();
  const table = await screen.findByRole('region', { name: 'NICs' });
  const rows = within(table).getAllByRole('row');
  expect(rows[1]!.textContent).toContain('52:54:00:00:00:01');
  expect(rows[1]!.textContent).toContain('free');
  expect(rows[2]!.textContent).toContain('in use by another project');
});

test('the owner attaches a network with the picker and detaches it after confirming', async () => {
  const user = userEvent.setup();
  const { posted, deleted } = setup();
  await screen.findByRole('region', { name: 'NICs' });
  await user.selectOptions(screen.getByLabelText('Network'), 'net-lab');
  await user.click(screen.getByRole('checkbox', { name: /storage \(143\)/ }));
  await user.click(screen.getByRole('button', { name: 'Attach' }));
  expect((await screen.findByRole('status')).textContent).toContain('lab attached to gpu-01 on 52:54:00:00:00:01.');
  expect(posted).toEqual([{ network: 'net-lab', tagged: ['net-store'] }]);
  await waitFor(() => expect((screen.getByRole('region', { name: 'NICs' })).textContent).toContain('142'));

  await user.click(screen.getByRole('button', { name: 'Detach' }));
  expect(screen.getByText('Detach lab from 52:54:00:00:00:01? Its port will be deleted.')).toBeTruthy();
  await user.click(screen.getByRole('button', { name: 'Detach' }));
  await waitFor(() => expect(deleted).toEqual(['/v1/nodes/n-1/networks/att-1']));
});

test('where tenant networks are not configured the section is not shown', async () => {
  setup('off');
  await screen.findByRole('heading', { name: 'gpu-01' });
  await new Promise((r) => setTimeout(r, 50));
  expect(screen.queryByRole('heading', { name: /Networks of/ })).toBeNull();
  expect(screen.queryByRole('alert')).toBeNull();
});
