import { describe, expect, it } from 'vitest';
import { backoffMs, isReportedFailure } from '../../src/engine/backoff.js';
import { deriveLeaseState } from '../../src/store/queries/engine-derive-lease-state.js';

describe('lease state derived from its allocations', () => {
  it.each([
    ['pending', ['reserved', 'reserved'], 'pending'],
    ['pending', ['active', 'starting'], 'pending'],
    ['pending', ['active', 'active'], 'active'],
    ['active', ['active', 'releasing'], 'ending'],
    ['active', ['released', 'active'], 'ending'],
    ['ending', ['released', 'releasing'], 'ending'],
    ['ending', ['released', 'quarantined'], 'ended'],
    ['ending', ['released', 'released'], 'ended'],
    // An allocation dropped because its node vanished does not count; the lease goes on with the others.
    ['pending', ['cancelled', 'active'], 'active'],
    ['ending', ['cancelled', 'released'], 'ended'],
    // Not one node could be handed over.
    ['pending', ['cancelled', 'cancelled'], 'failed'],
    // A cancelled lease stays cancelled.
    ['cancelled', ['cancelled'], 'cancelled'],
    ['pending', [], 'pending'],
  ])('%s with allocations %j is %s', (current, states, expected) => {
    expect(deriveLeaseState(current, states)).toBe(expected);
  });
});

describe('engine retries', () => {
  it('back off exponentially from the base to the cap', () => {
    const policy = { baseMs: 1_000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => backoffMs(n, policy))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('are reported on the first failure and every tenth', () => {
    expect(Array.from({ length: 31 }, (_, i) => i + 1).filter(isReportedFailure)).toEqual([1, 10, 20, 30]);
  });
});
