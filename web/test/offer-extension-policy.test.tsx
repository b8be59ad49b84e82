import { cleanup, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { apiError, fakeApi, meBody, PROJECT } from './fake-api';

const NODE = { id: 'n-1', name: 'gpu-01', owner: 'physics-lab', owner_project: PROJECT, facts: {}, traits: [], provision_state: 'available' };

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test("an owner offers a node with Chameleon's extension policy, sees it on the offer, and a bad value on its field", async () => {
  const user = userEvent.setup();
  const offers: unknown[] = [];
  const posted: Record<string, unknown>[] = [];
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [NODE], next: null }),
    'GET /v1/offers': () => ({ offers, next: null }),
    'POST /v1/offers': async (req) => {
      const body = (await req.json()) as Record<string, unknown>;
      posted.push(body);
      if (body.max_total_length === 'P3D') return apiError(400, 'invalid_request', 'max_total_length is shorter than max_lease_duration', { field: 'max_total_length' });
      const created = {
        id: 'o-1', node_id: 'n-1', node_name: 'gpu-01', project_id: PROJECT.id, start: '2030-01-01T00:00:00.000Z', end: null, max_lease_duration: 'P7D',
        min_lease_duration: null, allowed_projects: null, status: 'active', free_windows: [], created_at: '2030-01-01T00:00:00.000Z', withdrawn_at: null,
        reclaim_notice: null, extension_window: body.extension_window ?? null, extension_max_ahead: body.extension_max_ahead ?? null, max_total_length: body.max_total_length ?? null,
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
  await user.type(await screen.findByLabelText('Longest lease'), 'P7D');
  await user.type(screen.getByLabelText('Extension window'), 'P2D');
  await user.type(screen.getByLabelText('Extend at most ahead'), 'P7D');
  const total = screen.getByLabelText('Longest in total');
  await user.type(total, 'P3D');
  await user.click(screen.getByRole('button', { name: 'Offer node' }));
  await waitFor(() => expect(total.getAttribute('aria-invalid')).toBe('true'));
  await user.clear(total);
  await user.type(total, 'P14D');
  await user.click(screen.getByRole('button', { name: 'Offer node' }));
  await waitFor(() => expect(posted[1]).toMatchObject({ extension_window: 'P2D', extension_max_ahead: 'P7D', max_total_length: 'P14D' }));
  expect(await screen.findByText(/extend within/)).toBeTruthy();
  expect(screen.getByText((_, el) => el?.tagName === 'DIV' && el.textContent === 'at most 14d in total')).toBeTruthy();
});
