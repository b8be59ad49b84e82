import { cleanup, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { readToken } from '../src/auth/token-storage';
import { apiError, fakeApi, meBody } from './fake-api';

const GOOD = 'lh_good-token';

function api() {
  return fakeApi({
    'GET /v1/me': (req) =>
      req.headers.get('authorization') === `Bearer ${GOOD}` ? meBody('member') : apiError(401, 'unauthorized', 'missing or invalid token'),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
  });
}

function renderApp(fetch: typeof globalThis.fetch, path = '/nodes') {
  const location = memoryLocation({ path });
  render(
    <SessionProvider fetch={fetch}>
      <Router hook={location.hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return location;
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('signing in keeps the token in sessionStorage and signing out forgets it', async () => {
  const user = userEvent.setup();
  renderApp(api().fetch);
  // The page first asks how to sign in (GET /v1/auth/methods); this fake API does not know it: a token, as before.
  const field = await screen.findByLabelText('Token');
  expect(field.getAttribute('type')).toBe('password');
  await user.type(field, GOOD);
  await user.click(screen.getByRole('button', { name: 'Sign in' }));
  await screen.findByRole('navigation', { name: 'Main' });
  expect(readToken()).toBe(GOOD);
  expect(sessionStorage.getItem('leasehold.token')).toBe(GOOD);
  expect(localStorage.length).toBe(0);

  await user.click(screen.getByRole('button', { name: 'Sign out' }));
  expect(readToken()).toBeNull();
  expect(await screen.findByLabelText('Token')).toBeTruthy();
});

test('a refused token is said so and not stored', async () => {
  const user = userEvent.setup();
  renderApp(api().fetch);
  await user.type(await screen.findByLabelText('Token'), 'lh_wrong');
  await user.keyboard('{Enter}');
  expect((await screen.findByRole('alert')).textContent).toMatch(/not accepted/);
  expect(readToken()).toBeNull();
});

test('a token kept from earlier in the tab signs in without asking', async () => {
  sessionStorage.setItem('leasehold.token', GOOD);
  renderApp(api().fetch);
  expect(await screen.findByText(/alice-member · physics-lab \(member\)/)).toBeTruthy();
});

test('a kept token that was revoked meanwhile leads back to the sign-in page with a notice', async () => {
  sessionStorage.setItem('leasehold.token', 'lh_revoked');
  renderApp(api().fetch);
  await waitFor(() => expect(screen.getByLabelText('Token')).toBeTruthy());
  expect(screen.getByRole('status').textContent).toMatch(/no longer valid/);
  expect(readToken()).toBeNull();
});
