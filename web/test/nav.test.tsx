import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { App } from '../src/app';
import { SessionProvider } from '../src/auth/session';
import { audiences, navFor, type AppRoute } from '../src/nav';
import { ROUTES } from '../src/routes';
import { fakeApi, meBody, viewer } from './fake-api';

const Page = () => null;
const routes: AppRoute[] = [
  { path: '/nodes', page: Page, audience: audiences.everyone, nav: 'Nodes' },
  { path: '/offers', page: Page, audience: audiences.owners, nav: 'Offers' },
  { path: '/projects', page: Page, audience: audiences.admins, nav: 'Projects' },
  { path: '/leases/:id', page: Page, audience: audiences.everyone },
];
const labels = (v: ReturnType<typeof viewer>) => navFor(routes, v).map((i) => i.label);

test('the operator gets everything; detail pages are never in the navigation', () => {
  expect(labels(viewer('admin'))).toEqual(['Nodes', 'Offers', 'Projects']);
});

test('project users get owner pages only when their project owns nodes', () => {
  for (const role of ['manager', 'member', 'reader'] as const) {
    expect(labels(viewer(role, false))).toEqual(['Nodes']);
    expect(labels(viewer(role, true))).toEqual(['Nodes', 'Offers']);
  }
});

test('only readers are kept from acting', () => {
  expect(audiences.actors(viewer('reader'))).toBe(false);
  expect(audiences.actors(viewer('member'))).toBe(true);
  expect(audiences.actors(viewer('admin'))).toBe(true);
});

beforeEach(() => sessionStorage.clear());
afterEach(cleanup);

test('the rendered navigation follows the role, and a page outside it is "not found"', async () => {
  sessionStorage.setItem('leasehold.token', 'lh_t');
  const { fetch } = fakeApi({
    'GET /v1/me': () => meBody('reader'),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'GET /v1/leases': () => ({ leases: [], next: null }),
  });
  const location = memoryLocation({ path: '/no-such-page' });
  render(
    <SessionProvider fetch={fetch}>
      <Router hook={location.hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  const nav = await screen.findByRole('navigation', { name: 'Main' });
  const expected = ROUTES.filter((r) => r.nav && r.audience(viewer('reader'))).map((r) => r.nav);
  expect(within(nav).getAllByRole('link').map((a) => a.textContent)).toEqual(expected);
  expect(screen.getByRole('heading', { name: 'Page not found' })).toBeTruthy();
});

test('the sign-in asks whether the project owns nodes (GET /v1/nodes?owner=<project>)', async () => {
  sessionStorage.setItem('leasehold.token', 'lh_t');
  const api = fakeApi({
    'GET /v1/me': () => meBody('member'),
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'GET /v1/leases': () => ({ leases: [], next: null }),
  });
  render(
    <SessionProvider fetch={api.fetch}>
      <Router hook={memoryLocation({ path: '/leases' }).hook}>
        <App />
      </Router>
    </SessionProvider>,
  );
  await screen.findByRole('navigation', { name: 'Main' });
  const ownerProbe = api.requests.map((r) => new URL(r.url)).find((u) => u.pathname === '/v1/nodes' && u.searchParams.has('owner'));
  expect(ownerProbe?.searchParams.get('owner')).toBe(meBody('member').project!.id);
});
