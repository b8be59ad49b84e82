import { describe, expect, it } from 'vitest';
import { activeNavPath } from '../src/components/layout';

describe('the highlighted navigation entry', () => {
  const paths = ['/nodes', '/timeline', '/leases', '/leases/new'];

  it('is the section of a detail page, and only the request form on /leases/new', () => {
    expect(activeNavPath(paths, '/leases/0b5c…')).toBe('/leases');
    expect(activeNavPath(paths, '/leases')).toBe('/leases');
    expect(activeNavPath(paths, '/leases/new')).toBe('/leases/new');
    expect(activeNavPath(paths, '/leasesx')).toBeNull();
  });
});
