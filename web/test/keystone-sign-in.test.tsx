import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { readToken } from '../src/auth/token-storage';
import { apiError, fakeApi, meBody } from './fake-api';
import { APP_SECRET, EXPIRES, keystoneApi, PASSWORD, tokensSentTo } from './keystone-fake';

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

/** What a user would find anywhere the browser keeps things for the site. */
function everythingStored(): string {
  const dump = (s: Storage) => Array.from({ length: s.length }, (_, i) => `${s.key(i)}=${s.getItem(s.key(i)!)}`).join('\n');
  return `${dump(sessionStorage)}\n${dump(localStorage)}\n${document.cookie}`;
}

async function sentBody(requests: readonly Request[], path: string): Promise<unknown[]> {
  return Promise.all(requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === path).map((r) => r.clone().json()));
}

beforeEach(() => {
  sessionStorage.clear();
  localStorage.clear();
});
afterEach(cleanup);

test('under Keystone a user signs in with a user name and password, and sees until when', async () => {
  const user = userEvent.setup();
  const api = keystoneApi();
  renderApp(api.fetch);
  expect(screen.getByRole('heading', { name: 'Sign in to Leasehold' })).toBeTruthy();
  const tabs = await screen.findByRole('tablist', { name: 'Sign in with' });
  expect(within(tabs).getAllByRole('tab').map((t) => [t.textContent, t.getAttribute('aria-selected')])).toEqual([
    ['User & password', 'true'],
    ['Application credential', 'false'],
    ['Paste a token', 'false'],
  ]);
  // The user name has the focus; the domain is Default unless changed.
  expect(document.activeElement).toBe(screen.getByLabelText('User name'));
  expect((screen.getByLabelText('User domain') as HTMLInputElement).value).toBe('Default');
  expect(screen.getByLabelText('Password').getAttribute('type')).toBe('password');

  await user.type(screen.getByLabelText('User name'), 'x-member');
  await user.type(screen.getByLabelText('Password'), PASSWORD);
  await user.type(screen.getByLabelText('Project'), 'lessee-x');
  await user.click(screen.getByRole('button', { name: 'Sign in' }));

  await screen.findByRole('navigation', { name: 'Main' });
  expect(await sentBody(api.requests, '/v1/auth/tokens')).toEqual([
    { password: { user: 'x-member', password: PASSWORD, user_domain: 'Default', project: 'lessee-x' } },
  ]);
  // The token sent the call of a sign-in with no token of its own, and it alone is kept.
  expect(api.requests.find((r) => new URL(r.url).pathname === '/v1/auth/tokens')?.headers.get('authorization')).toBeNull();
  expect(readToken()).toBe('ks-lessee');
  expect(screen.getByText(/alice-member · lessee-x \(member\)/)).toBeTruthy();
  const expiry = document.querySelector(`time[datetime="${EXPIRES}"]`);
  expect(expiry?.textContent).toMatch(/^Signed in until /);
});

test('a refused password shows the API’s message at the password, keeps the user name and forgets the password', async () => {
  const user = userEvent.setup();
  const api = keystoneApi();
  renderApp(api.fetch);
  await user.type(await screen.findByLabelText('User name'), 'x-member');
  await user.type(screen.getByLabelText('Password'), 'wrong password');
  await user.type(screen.getByLabelText('Project'), 'lessee-x');
  await user.keyboard('{Enter}');

  const password = screen.getByLabelText('Password') as HTMLInputElement;
  await waitFor(() => expect(password.getAttribute('aria-invalid')).toBe('true'));
  // Verbatim, tied to the field where the focus now is, so a screen reader reads it there.
  const described = password.getAttribute('aria-describedby')!.split(' ').map((id) => document.getElementById(id)?.textContent);
  expect(described).toContain('Keystone refused the credentials of x-member@lessee-x');
  expect(document.activeElement).toBe(password);
  expect(password.value).toBe('');
  expect((screen.getByLabelText('User name') as HTMLInputElement).value).toBe('x-member');
  expect((screen.getByLabelText('Project') as HTMLInputElement).value).toBe('lessee-x');
  expect(readToken()).toBeNull();
  expect(everythingStored()).not.toContain('wrong password');

  // Typed again, it signs in.
  await user.type(password, PASSWORD);
  await user.keyboard('{Enter}');
  await screen.findByRole('navigation', { name: 'Main' });
});

test('no password nor application credential secret reaches the browser’s storage, only the token and its expiry', async () => {
  const user = userEvent.setup();
  const api = keystoneApi();
  renderApp(api.fetch);
  await user.type(await screen.findByLabelText('User name'), 'x-member');
  await user.type(screen.getByLabelText('Password'), PASSWORD);
  await user.keyboard('{Enter}');
  await screen.findByRole('navigation', { name: 'Main' });
  expect(everythingStored()).not.toContain(PASSWORD);
  expect(Object.keys(sessionStorage).sort()).toEqual(['leasehold.token', 'leasehold.token-expires-at']);
  expect(localStorage.length).toBe(0);

  await user.click(screen.getByRole('button', { name: 'Sign out' }));
  expect(sessionStorage.length).toBe(0);
  await user.click(await screen.findByRole('tab', { name: 'Application credential' }));
  await user.type(screen.getByLabelText('Application credential ID'), 'ac-1');
  await user.type(screen.getByLabelText('Secret'), APP_SECRET);
  await user.keyboard('{Enter}');
  await screen.findByRole('navigation', { name: 'Main' });
  expect(everythingStored()).not.toContain(APP_SECRET);
  expect(localStorage.length).toBe(0);
});

test('an application credential signs in from its tab; a refused secret is said at the secret', async () => {
  const user = userEvent.setup();
  const api = keystoneApi();
  renderApp(api.fetch);
  await user.click(await screen.findByRole('tab', { name: 'Application credential' }));
  expect(screen.getByRole('tabpanel', { name: 'Application credential' })).toBeTruthy();
  expect(screen.queryByLabelText('User name')).toBeNull();
  await user.type(screen.getByLabelText('Application credential ID'), 'ac-1');
  await user.type(screen.getByLabelText('Secret'), 'not-it');
  await user.keyboard('{Enter}');
  const secret = screen.getByLabelText('Secret') as HTMLInputElement;
  await waitFor(() => expect(secret.getAttribute('aria-invalid')).toBe('true'));
  expect(screen.getByText('Keystone refused the credentials of application credential ac-1')).toBeTruthy();
  expect(secret.value).toBe('');
  expect((screen.getByLabelText('Application credential ID') as HTMLInputElement).value).toBe('ac-1');

  await user.type(secret, APP_SECRET);
  await user.keyboard('{Enter}');
  await screen.findByRole('navigation', { name: 'Main' });
  expect(await sentBody(api.requests, '/v1/auth/tokens')).toEqual([
    { application_credential: { id: 'ac-1', secret: 'not-it' } },
    { application_credential: { id: 'ac-1', secret: APP_SECRET } },
  ]);
  expect(readToken()).toBe('ks-lessee');
});

test('a Keystone token pasted in the third tab signs in as it is', async () => {
  const user = userEvent.setup();
  const api = keystoneApi();
  renderApp(api.fetch);
  await user.click(await screen.findByRole('tab', { name: 'Paste a token' }));
  await user.type(screen.getByLabelText('Token'), 'ks-owner-a');
  await user.keyboard('{Enter}');
  expect(await screen.findByText(/alice-member · owner-a \(member\)/)).toBeTruthy();
  expect(readToken()).toBe('ks-owner-a');
  expect(await sentBody(api.requests, '/v1/auth/tokens')).toEqual([]);
  // Its expiry is not known: none is shown (the first 401 after it ends the session).
  expect(screen.queryByText(/Signed in until/)).toBeNull();
  // Signing out forgets it here but leaves it alone in Keystone: it may be in use elsewhere (a CLI, a script).
  await user.click(screen.getByRole('button', { name: 'Sign out' }));
  await screen.findByRole('heading', { name: 'Sign in to Leasehold' });
  expect(tokensSentTo(api.requests, 'DELETE', '/v1/auth/tokens')).toEqual([]);
  expect('ks-owner-a' in api.tokens).toBe(true);
});

test('signing out revokes the Keystone token the sign-in obtained, so it is worth nothing to anyone after', async () => {
  const user = userEvent.setup();
  const api = keystoneApi();
  renderApp(api.fetch);
  await user.type(await screen.findByLabelText('User name'), 'x-member');
  await user.type(screen.getByLabelText('Password'), PASSWORD);
  await user.click(screen.getByRole('button', { name: 'Sign in' }));
  await screen.findByRole('navigation', { name: 'Main' });
  await user.click(screen.getByRole('button', { name: 'Sign out' }));
  await screen.findByRole('heading', { name: 'Sign in to Leasehold' });
  await waitFor(() => expect(tokensSentTo(api.requests, 'DELETE', '/v1/auth/tokens')).toEqual(['ks-lessee']));
  expect('ks-lessee' in api.tokens).toBe(false);
  expect(readToken()).toBeNull();
});

test('the ways to sign in are reached and changed with the keyboard alone', async () => {
  const user = userEvent.setup();
  renderApp(keystoneApi().fetch);
  const name = await screen.findByLabelText('User name');
  expect(document.activeElement).toBe(name);
  // One Tab stop for the tabs, before the fields; the arrow keys select, Tab goes on into the panel.
  await user.keyboard('{Shift>}{Tab}{/Shift}');
  expect(document.activeElement).toBe(screen.getByRole('tab', { name: 'User & password' }));
  await user.keyboard('{ArrowRight}');
  expect(document.activeElement).toBe(screen.getByRole('tab', { name: 'Application credential', selected: true }));
  await user.keyboard('{ArrowRight}');
  expect(document.activeElement).toBe(screen.getByRole('tab', { name: 'Paste a token', selected: true }));
  await user.keyboard('{ArrowRight}');
  expect(document.activeElement).toBe(screen.getByRole('tab', { name: 'User & password', selected: true }));
  await user.keyboard('{End}');
  await user.tab();
  expect(document.activeElement).toBe(screen.getByLabelText('Token'));
  await user.keyboard('{Shift>}{Tab}{/Shift}{Home}');
  expect(document.activeElement).toBe(screen.getByRole('tab', { name: 'User & password', selected: true }));
  expect(screen.getByRole('tab', { name: 'Paste a token' }).getAttribute('tabindex')).toBe('-1');
  // The values typed in a panel are still there when it is back.
  await user.tab();
  expect(document.activeElement).toBe(screen.getByLabelText('User name'));
});

test('empty fields are asked for without calling the API; a field the API refuses is named at that field', async () => {
  const user = userEvent.setup();
  const api = keystoneApi({
    routes: {
      'POST /v1/auth/tokens': () =>
        apiError(400, 'invalid_request', 'invalid request: body.password.project: Too big', {
          issues: [{ field: 'body.password.project', message: 'Too big: expected string to have <=255 characters' }],
        }),
    },
  });
  renderApp(api.fetch);
  await user.click(await screen.findByRole('button', { name: 'Sign in' }));
  expect(screen.getByText('Enter your user name.')).toBeTruthy();
  expect(screen.getByText('Enter your password.')).toBeTruthy();
  expect(document.activeElement).toBe(screen.getByLabelText('User name'));
  expect(await sentBody(api.requests, '/v1/auth/tokens')).toEqual([]);

  await user.type(screen.getByLabelText('User name'), 'x-member');
  await user.type(screen.getByLabelText('Password'), PASSWORD);
  await user.type(screen.getByLabelText('Project'), 'p'.repeat(20));
  await user.keyboard('{Enter}');
  const project = screen.getByLabelText('Project');
  await waitFor(() => expect(project.getAttribute('aria-invalid')).toBe('true'));
  expect(screen.getByText('Too big: expected string to have <=255 characters')).toBeTruthy();
  // Not a refusal of the password: it stays, to send again once the project is right.
  expect((screen.getByLabelText('Password') as HTMLInputElement).value).toBe(PASSWORD);
});

test('Keystone out of reach (503) is said for the whole form, in the API’s words', async () => {
  const user = userEvent.setup();
  renderApp(
    keystoneApi({ routes: { 'POST /v1/auth/tokens': () => apiError(503, 'unavailable', 'Keystone is unreachable: connect ECONNREFUSED') } }).fetch,
  );
  await user.type(await screen.findByLabelText('User name'), 'x-member');
  await user.type(screen.getByLabelText('Password'), PASSWORD);
  await user.keyboard('{Enter}');
  expect((await screen.findByRole('alert')).textContent).toContain('Keystone is unreachable: connect ECONNREFUSED');
});

test('under local identity the page asks for a token only, as before', async () => {
  const api = fakeApi({
    'GET /v1/auth/methods': () => ({ identity: 'local', methods: ['token'] }),
    'GET /v1/me': () => meBody('member'),
  });
  renderApp(api.fetch);
  const token = await screen.findByLabelText('Token');
  expect(document.activeElement).toBe(token);
  expect(screen.queryByRole('tablist')).toBeNull();
  expect(screen.queryByLabelText('User name')).toBeNull();
});

test('once the token has expired, the next refused request leads back to the sign-in page saying the session expired', async () => {
  const user = userEvent.setup();
  // Signed in earlier in this tab with a token whose expiry has passed; the server still took it a moment ago.
  sessionStorage.setItem('leasehold.token', 'ks-lessee');
  sessionStorage.setItem('leasehold.token-expires-at', '2001-02-03T04:05:00.000Z');
  const api = keystoneApi();
  renderApp(api.fetch, '/nodes');
  await screen.findByRole('navigation', { name: 'Main' });
  expect(screen.getByText('Session expired')).toBeTruthy();

  delete api.tokens['ks-lessee'];
  await user.click(screen.getByRole('link', { name: 'Leases' }));
  const notice = await screen.findByText(/^Your session expired at /);
  expect(notice.getAttribute('role')).toBe('status');
  expect(notice.textContent).toMatch(/^Your session expired at .*2001.*Sign in again\.$/);
  expect(readToken()).toBeNull();
  expect(sessionStorage.length).toBe(0);
});

test('a token refused before its expiry is said to be no longer valid, not expired', async () => {
  const user = userEvent.setup();
  sessionStorage.setItem('leasehold.token', 'ks-lessee');
  sessionStorage.setItem('leasehold.token-expires-at', EXPIRES);
  const api = keystoneApi();
  renderApp(api.fetch, '/nodes');
  await screen.findByRole('navigation', { name: 'Main' });
  delete api.tokens['ks-lessee'];
  await user.click(screen.getByRole('link', { name: 'Leases' }));
  expect((await screen.findByText(/no longer valid/)).textContent).toBe('Your token is no longer valid (revoked or expired). Sign in again.');
});
