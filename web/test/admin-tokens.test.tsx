import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { fakeApi, meBody, PROJECT } from './fake-api';

const SECRET = 'lh_Zx9-secret-value-0123456789abcdefghijklmnopq';
const ALICE = { id: 'u-alice', name: 'alice', project_id: PROJECT.id, role: 'member', created_at: '2030-01-01T00:00:00.000Z' };

function setup() {
  const tokens: Record<string, unknown>[] = [];
  const api = fakeApi({
    'GET /v1/me': () => meBody('admin'),
    'GET /v1/projects': () => ({ projects: [{ ...PROJECT, description: '', quota: { max_nodes: null, max_lease_duration: null }, created_at: '2030-01-01T00:00:00.000Z', updated_at: '2030-01-01T00:00:00.000Z' }], next: null }),
    'GET /v1/users': () => ({ users: [ALICE], next: null }),
    'GET /v1/tokens': () => ({ tokens, next: null }),
    'POST /v1/tokens': async (req) => {
      const body = (await req.json()) as { user_id: string; description?: string };
      const meta = { id: 't-1', user_id: body.user_id, prefix: 'lh_Zx9', description: body.description ?? '', created_at: '2030-01-01T00:00:00.000Z', expires_at: null, revoked_at: null };
      tokens.push(meta);
      return { ...meta, token: SECRET };
    },
  });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path: '/admin/users' }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return api;
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

const secretOnPage = () =>
  document.body.innerHTML.includes(SECRET) || [...document.querySelectorAll('input')].some((i) => i.value === SECRET);

test('a new token’s value is shown once, with a copy button and a warning, and is gone after leaving the page', async () => {
  const user = userEvent.setup();
  setup();
  const row = await screen.findByRole('row', { name: /alice/ });
  await user.click(within(row).getByRole('button', { name: 'Tokens' }));
  expect(await screen.findByText(/alice has no tokens/)).toBeTruthy();
  await user.type(screen.getByLabelText('Description'), 'laptop');
  await user.click(screen.getByRole('button', { name: 'Create token' }));

  const value = (await screen.findByLabelText('Token')) as HTMLInputElement;
  expect(value.value).toBe(SECRET);
  expect(value.readOnly).toBe(true);
  expect(screen.getByText(/you will not see it again/i)).toBeTruthy();
  expect(screen.getByRole('button', { name: 'Copy token' })).toBeTruthy();
  // The list shows the prefix, never the value.
  await waitFor(() => expect(screen.getByRole('region', { name: 'Tokens of alice' }).textContent).toContain('lh_Zx9…'));
  expect(screen.getByRole('region', { name: 'Tokens of alice' }).textContent).not.toContain(SECRET);

  // Away and back: the value is nowhere.
  await user.click(within(screen.getByRole('navigation', { name: 'Main' })).getByRole('link', { name: 'Projects' }));
  await screen.findByRole('heading', { name: 'Projects', level: 1 });
  expect(secretOnPage()).toBe(false);
  await user.click(within(screen.getByRole('navigation', { name: 'Main' })).getByRole('link', { name: 'Users & tokens' }));
  const again = await screen.findByRole('row', { name: /alice/ });
  await user.click(within(again).getByRole('button', { name: 'Tokens' }));
  await waitFor(() => expect(screen.getByRole('region', { name: 'Tokens of alice' }).textContent).toContain('lh_Zx9…'));
  expect(screen.queryByLabelText('Token')).toBeNull();
  expect(secretOnPage()).toBe(false);
});

test('“I have stored it” puts the value away at once', async () => {
  const user = userEvent.setup();
  setup();
  await user.click(within(await screen.findByRole('row', { name: /alice/ })).getByRole('button', { name: 'Tokens' }));
  await user.click(await screen.findByRole('button', { name: 'Create token' }));
  expect(((await screen.findByLabelText('Token')) as HTMLInputElement).value).toBe(SECRET);
  await user.click(screen.getByRole('button', { name: 'I have stored it' }));
  expect(secretOnPage()).toBe(false);
});
