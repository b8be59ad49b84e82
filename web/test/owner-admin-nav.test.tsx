import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { navFor } from '../src/nav';
import { ROUTES } from '../src/routes';
import { fakeApi, meBody, viewer } from './fake-api';

const OWNER_PAGES = ['Offers', "My nodes' leases"];
const ADMIN_PAGES = ['Projects', 'Users & tokens', 'Events'];
const labels = (v: ReturnType<typeof viewer>) => navFor(ROUTES, v).map((i) => i.label);

test('the owner pages are in the navigation of users whose project owns nodes, and of the operator', () => {
  for (const role of ['reader', 'member', 'manager'] as const) {
    expect(labels(viewer(role, true))).toEqual(expect.arrayContaining(OWNER_PAGES));
    for (const page of OWNER_PAGES) expect(labels(viewer(role, false))).not.toContain(page);
  }
  expect(labels(viewer('admin'))).toEqual(expect.arrayContaining(OWNER_PAGES));
});

test('the admin pages are in the operator’s navigation only, owners’ included', () => {
  expect(labels(viewer('admin'))).toEqual(expect.arrayContaining(ADMIN_PAGES));
  for (const role of ['reader', 'member', 'manager'] as const) {
    for (const owns of [true, false]) {
      for (const page of ADMIN_PAGES) expect(labels(viewer(role, owns))).not.toContain(page);
    }
  }
});

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

function renderAs(role: 'member' | 'admin', ownsNodes: boolean, path: string) {
  sessionStorage.setItem('leasehold.token', 'lh_t');
  const { fetch } = fakeApi({
    'GET /v1/me': () => meBody(role),
    // The sign-in asks GET /v1/nodes?owner=<project>&limit=1 to decide whether the project owns nodes.
    'GET /v1/nodes': () => ({ nodes: ownsNodes ? [{ id: 'n1', name: 'gpu-01', owner_project: { id: 'p', name: 'p' } }] : [], next: null }),
    'GET /v1/leases': () => ({ leases: [], next: null }),
    'GET /v1/offers': () => ({ offers: [], next: null }),
    'GET /v1/projects': () => ({ projects: [], next: null }),
  });
  render(
    <SessionProvider fetch={fetch}>
      <Router hook={memoryLocation({ path }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
}

test('an owner who is not the operator gets the owner pages, and an admin page address is "not found"', async () => {
  renderAs('member', true, '/admin/users');
  const nav = await screen.findByRole('navigation', { name: 'Main' });
  const links = within(nav).getAllByRole('link').map((a) => a.textContent);
  expect(links).toEqual(expect.arrayContaining(OWNER_PAGES));
  for (const page of ADMIN_PAGES) expect(links).not.toContain(page);
  expect(screen.getByRole('heading', { name: 'Page not found' })).toBeTruthy();
});

test('a project without nodes gets neither the owner pages nor the admin pages', async () => {
  renderAs('member', false, '/offers');
  const nav = await screen.findByRole('navigation', { name: 'Main' });
  const links = within(nav).getAllByRole('link').map((a) => a.textContent);
  for (const page of [...OWNER_PAGES, ...ADMIN_PAGES]) expect(links).not.toContain(page);
  expect(screen.getByRole('heading', { name: 'Page not found' })).toBeTruthy();
});
