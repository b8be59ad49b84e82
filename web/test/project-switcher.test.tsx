import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { readToken } from '../src/auth/token-storage';
import { apiError, fakeApi, meBody } from './fake-api';
import { EXPIRES, keystoneApi, LESSEE, OWNER, tokensSentTo } from './keystone-fake';

function renderApp(fetch: typeof globalThis.fetch, path: string) {
  const location = memoryLocation({ path, record: true });
  render(
    <SessionProvider fetch={fetch}>
      <Router hook={location.hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  return location;
}

/** Signed in earlier in this tab as the lessee project's member (a Keystone token with its expiry). */
function signedInAsLessee() {
  sessionStorage.setItem('leasehold.token', 'ks-lessee');
  sessionStorage.setItem('leasehold.token-expires-at', EXPIRES);
}

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('a Keystone user in two projects switches from the navigation: a token for the other project, and the page loads again with it', async () => {
  const user = userEvent.setup();
  signedInAsLessee();
  const api = keystoneApi();
  const location = renderApp(api.fetch, '/leases');
  await screen.findByRole('heading', { name: 'Leases', level: 1 });
  const select = (await screen.findByLabelText('Project')) as HTMLSelectElement;
  expect(Array.from(select.options).map((o) => o.textContent)).toEqual(['lessee-x', 'owner-a']);
  expect(select.value).toBe(LESSEE.id);
  // Choosing is not switching (the arrow keys move through a closed select): the button is.
  const button = screen.getByRole('button', { name: 'Switch' }) as HTMLButtonElement;
  expect(button.disabled).toBe(true);
  await user.selectOptions(select, OWNER.id);
  expect(tokensSentTo(api.requests, 'POST', '/v1/auth/tokens')).toEqual([]);
  const leasesBefore = tokensSentTo(api.requests, 'GET', '/v1/leases').length;

  await user.click(button);
  expect(await screen.findByText(/alice-member · owner-a \(member\)/)).toBeTruthy();
  const switches = api.requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/auth/tokens');
  expect(await Promise.all(switches.map((r) => r.clone().json()))).toEqual([{ token: { project: OWNER.id } }]);
  expect(tokensSentTo(api.requests, 'POST', '/v1/auth/tokens')).toEqual(['ks-lessee']);
  expect(readToken()).toBe('ks-owner-a');
  // The token of the project left was the UI's own: revoked.
  await waitFor(() => expect(tokensSentTo(api.requests, 'DELETE', '/v1/auth/tokens')).toEqual(['ks-lessee']));
  // The page asked for its data again, with the new token.
  await waitFor(() => expect(tokensSentTo(api.requests, 'GET', '/v1/leases').slice(leasesBefore)).toContain('ks-owner-a'));
  expect(tokensSentTo(api.requests, 'GET', '/v1/leases').slice(leasesBefore)).not.toContain('ks-lessee');
  expect(location.history?.at(-1)).toBe('/leases');
  await waitFor(() => expect(document.activeElement).toBe(screen.getByLabelText('Project')));
  expect((screen.getByLabelText('Project') as HTMLSelectElement).value).toBe(OWNER.id);
});

test('switching project from a lease of the other project leads to the leases of the new one', async () => {
  const user = userEvent.setup();
  signedInAsLessee();
  // A lease page the user cannot see (or of the project being left: the same 404 after the switch).
  const api = keystoneApi({ routes: { 'GET /v1/leases/:id': () => apiError(404, 'not_found', 'lease L-1 not found') } });
  const location = renderApp(api.fetch, '/leases/L-1');
  await user.selectOptions(await screen.findByLabelText('Project'), OWNER.id);
  await user.click(screen.getByRole('button', { name: 'Switch' }));
  await screen.findByText(/alice-member · owner-a \(member\)/);
  await waitFor(() => expect(location.history?.at(-1)).toBe('/leases'));
});

test('a refused switch is said beside the switcher, and the session goes on with its token', async () => {
  const user = userEvent.setup();
  signedInAsLessee();
  // Keystone no longer lets the user into the other project (its role there was removed).
  const api = keystoneApi({ projects: [LESSEE, { id: 'gone', name: 'gone-lab' }] });
  renderApp(api.fetch, '/nodes');
  await user.selectOptions(await screen.findByLabelText('Project'), 'gone');
  await user.click(screen.getByRole('button', { name: 'Switch' }));
  const alert = await screen.findByRole('alert');
  expect(alert.textContent).toContain("Keystone refused the credentials of the caller's token, for project gone");
  expect(readToken()).toBe('ks-lessee');
  expect(screen.getByRole('navigation', { name: 'Main' })).toBeTruthy();
  expect(screen.getByText(/alice-member · lessee-x \(member\)/)).toBeTruthy();
});

test('a Keystone user of one project, and a local user, get no switcher', async () => {
  signedInAsLessee();
  const one = keystoneApi({ projects: [LESSEE] });
  renderApp(one.fetch, '/nodes');
  await screen.findByRole('navigation', { name: 'Main' });
  await waitFor(() => expect(one.requests.some((r) => new URL(r.url).pathname === '/v1/auth/projects')).toBe(true));
  expect(screen.queryByLabelText('Project')).toBeNull();
  cleanup();

  sessionStorage.clear();
  sessionStorage.setItem('leasehold.token', 'lh_t');
  const local = fakeApi({ 'GET /v1/me': () => meBody('member'), 'GET /v1/nodes': () => ({ nodes: [], next: null }) });
  renderApp(local.fetch, '/nodes');
  await screen.findByRole('navigation', { name: 'Main' });
  expect(screen.queryByLabelText('Project')).toBeNull();
  // Local tokens have no Keystone projects to ask for, and their expiry is not shown (not known).
  expect(local.requests.some((r) => new URL(r.url).pathname === '/v1/auth/projects')).toBe(false);
  expect(screen.queryByText(/Signed in until/)).toBeNull();
});

test('under Keystone the operator has no “Users & tokens” page and cannot create projects; quotas stay', async () => {
  sessionStorage.setItem('leasehold.token', 'ks-admin');
  const project = {
    id: LESSEE.id,
    name: LESSEE.name,
    description: '',
    quota: { max_nodes: 4, max_lease_duration: null },
    created_at: '2030-01-01T00:00:00Z',
    updated_at: '2030-01-01T00:00:00Z',
  };
  const api = keystoneApi({
    role: 'admin',
    tokens: { 'ks-admin': null },
    projects: [],
    routes: { 'GET /v1/projects': () => ({ projects: [project], next: null }) },
  });
  renderApp(api.fetch, '/admin/projects');
  const nav = await screen.findByRole('navigation', { name: 'Main' });
  const links = within(nav).getAllByRole('link').map((a) => a.textContent);
  expect(links).toEqual(expect.arrayContaining(['Projects', 'Events']));
  expect(links).not.toContain('Users & tokens');
  await screen.findByRole('heading', { name: 'Projects', level: 1 });
  await screen.findByRole('button', { name: 'Edit quota' });
  expect(screen.queryByRole('heading', { name: 'New project' })).toBeNull();
  expect(screen.queryByRole('button', { name: 'Create project' })).toBeNull();
  expect(screen.getByText(/Projects are Keystone’s/)).toBeTruthy();
  cleanup();

  renderApp(api.fetch, '/admin/users');
  await screen.findByRole('navigation', { name: 'Main' });
  expect(screen.getByRole('heading', { name: 'Page not found' })).toBeTruthy();
});

test('under local identity the operator keeps “Users & tokens” and the new project form', async () => {
  sessionStorage.setItem('leasehold.token', 'lh_admin');
  const api = fakeApi({
    'GET /v1/me': () => meBody('admin'),
    'GET /v1/projects': () => ({ projects: [], next: null }),
  });
  renderApp(api.fetch, '/admin/projects');
  const nav = await screen.findByRole('navigation', { name: 'Main' });
  expect(within(nav).getAllByRole('link').map((a) => a.textContent)).toContain('Users & tokens');
  expect(await screen.findByRole('heading', { name: 'New project' })).toBeTruthy();
});
