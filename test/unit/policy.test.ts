import { describe, expect, it } from 'vitest';
import type { Principal, Role } from '../../src/domain/identity.js';
import { canCreateUser, canLeaseFor, canManageTokensOf, canSeeUser, nodeVisibility } from '../../src/domain/policy.js';

const P1 = '11111111-1111-4111-8111-111111111111';
const P2 = '22222222-2222-4222-8222-222222222222';

function principal(role: Role, projectId: string | null = P1): Principal {
  return {
    userId: `u-${role}`,
    userName: role,
    role,
    projectId,
    projectName: projectId ? `name-${projectId}` : null,
    tokenId: 't',
  };
}

describe('policy', () => {
  it('lets the operator see every node and a project its own and those it leases at the instant asked', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    expect(nodeVisibility(principal('admin', null), now)).toEqual({ kind: 'all' });
    expect(nodeVisibility(principal('reader'), now)).toEqual({ kind: 'project', projectId: P1, projectName: `name-${P1}`, now });
  });

  it("lets a manager create users in its own project, up to manager, and nowhere else", () => {
    const manager = principal('manager');
    expect(canCreateUser(manager, P1, 'member')).toBe(true);
    expect(canCreateUser(manager, P1, 'manager')).toBe(true);
    expect(canCreateUser(manager, P1, 'admin')).toBe(false);
    expect(canCreateUser(manager, P2, 'reader')).toBe(false);
    expect(canCreateUser(principal('member'), P1, 'reader')).toBe(false);
    expect(canCreateUser(principal('admin', null), P2, 'manager')).toBe(true);
  });

  it('lets the operator ask for leases for any project, with or without one of its own, and anyone else only for its own', () => {
    expect(canLeaseFor(principal('admin', null), P2)).toBe(true);
    expect(canLeaseFor(principal('admin', P1), P2)).toBe(true);
    for (const role of ['reader', 'member', 'manager'] as const) {
      expect(canLeaseFor(principal(role), P1)).toBe(true);
      expect(canLeaseFor(principal(role), P2)).toBe(false);
    }
  });

  it('lets a user see itself and its project members, not other projects', () => {
    const reader = principal('reader');
    expect(canSeeUser(reader, { id: 'u-reader', project_id: P1 })).toBe(true);
    expect(canSeeUser(reader, { id: 'x', project_id: P1 })).toBe(true);
    expect(canSeeUser(reader, { id: 'y', project_id: P2 })).toBe(false);
    expect(canSeeUser(reader, { id: 'op', project_id: null })).toBe(false);
  });

  it("lets a user manage its own tokens and a manager its project's, never an operator's", () => {
    expect(canManageTokensOf(principal('reader'), { id: 'u-reader', project_id: P1, role: 'reader' })).toBe(true);
    expect(canManageTokensOf(principal('reader'), { id: 'x', project_id: P1, role: 'reader' })).toBe(false);
    expect(canManageTokensOf(principal('manager'), { id: 'x', project_id: P1, role: 'member' })).toBe(true);
    expect(canManageTokensOf(principal('manager'), { id: 'x', project_id: P2, role: 'member' })).toBe(false);
    expect(canManageTokensOf(principal('manager'), { id: 'op', project_id: null, role: 'admin' })).toBe(false);
  });
});
