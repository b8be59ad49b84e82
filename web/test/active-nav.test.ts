import { describe, expect, it } from 'vitest';
import { activeNavPath, navFor, type Viewer } from '../src/nav';
import { ROUTES } from '../src/routes';

describe('the highlighted navigation entry', () => {
  const paths = ['/nodes', '/timeline', '/leases', '/leases/new'];

  it('is the section of a detail page, and only the request form on /leases/new', () => {
    expect(activeNavPath(paths, '/leases/0b5c…')).toBe('/leases');
    expect(activeNavPath(paths, '/leases')).toBe('/leases');
    expect(activeNavPath(paths, '/leases/new')).toBe('/leases/new');
    expect(activeNavPath(paths, '/leasesx')).toBeNull();
  });
});

describe('the request form in the navigation', () => {
  const viewer = (role: Viewer['role'], project: Viewer['project']): Viewer => ({ userId: 'u', userName: 'u', role, project, ownsNodes: false, identity: 'local' });

  it('is offered to project members and managers and to the operator (who picks the project), not to readers', () => {
    const offered = (v: Viewer) => navFor(ROUTES, v).some((item) => item.path === '/leases/new');
    const lab = { id: 'p', name: 'lab' };
    expect([viewer('member', lab), viewer('manager', lab), viewer('reader', lab), viewer('admin', null)].map(offered)).toEqual([true, true, false, true]);
  });
});
