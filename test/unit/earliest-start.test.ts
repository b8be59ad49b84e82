import { describe, expect, it } from 'vitest';
import type { Offer } from '../../src/domain/leasing.js';
import { assignInOrder } from '../../src/domain/scheduling/best-fit.js';
import { earliestFeasibleStart, intersectStarts, offerStarts } from '../../src/domain/scheduling/earliest-start.js';

const H = 3_600_000;
const offer = (over: Partial<Offer>): Offer => ({
  id: 'o',
  node_id: 'n',
  project_id: 'owner',
  start: new Date(0),
  end: null,
  max_lease_ms: null,
  min_lease_ms: null,
  allowed_projects: null,
  created_by: null,
  created_at: new Date(0),
  withdrawn_at: null,
  reclaim_notice_ms: null,
  extension_window_ms: null,
  extension_max_ahead_ms: null,
  max_total_ms: null,
  parent_allocation_id: null,
  ...over,
});

describe('earliest start over free intervals', () => {
  it('is the first instant at which every group gets its nodes at once, not the first at which each node is free', () => {
    const groups = [
      {
        count: 2,
        candidates: [
          { id: 'a', starts: [{ start: 0, end: 2 * H }] },
          { id: 'b', starts: [{ start: 5 * H, end: Infinity }] },
          { id: 'c', starts: [{ start: 7 * H, end: Infinity }] },
        ],
      },
    ];
    // a is free early but not later; b from 5 h: only at 7 h are two nodes free together (b and c).
    expect(earliestFeasibleStart(groups, 0, 100 * H)).toBe(7 * H);
    expect(earliestFeasibleStart(groups, 0, 6 * H)).toBeNull();
  });

  it('matches competing groups over the nodes free at an instant (a node serves one group only)', () => {
    const groups = [
      { count: 1, candidates: [{ id: 'big', starts: [{ start: 0, end: Infinity }] }, { id: 'small', starts: [{ start: 3 * H, end: Infinity }] }] },
      { count: 1, candidates: [{ id: 'big', starts: [{ start: 0, end: Infinity }] }] },
    ];
    expect(earliestFeasibleStart(groups, 0, 10 * H)).toBe(3 * H);
  });

  it('starts within an offer that allows the project and the length, and ends inside it', () => {
    const offers = [
      offer({ start: new Date(10 * H), end: new Date(20 * H) }),
      offer({ id: 'x', start: new Date(30 * H), end: null, allowed_projects: ['other'] }),
      offer({ id: 'y', start: new Date(40 * H), end: null, max_lease_ms: H }),
    ];
    expect(offerStarts(offers, 'me', 2 * H, false)).toEqual([{ start: 10 * H, end: 18 * H }]);
    expect(offerStarts(offers, 'me', 2 * H, true)).toEqual([{ start: -Infinity, end: Infinity }]);
    expect(intersectStarts([{ start: 0, end: 12 * H }, { start: 15 * H, end: 50 * H }], [{ start: 10 * H, end: 18 * H }])).toEqual([
      { start: 10 * H, end: 12 * H },
      { start: 15 * H, end: 18 * H },
    ]);
  });
});

describe('assignment in a given order of preference', () => {
  it('takes each group its first candidates, moving an earlier group to its next when a later one needs the node', () => {
    expect(assignInOrder([{ count: 1, candidates: ['x', 'y'] }, { count: 1, candidates: ['x'] }])).toEqual({ ok: true, nodes: [['y'], ['x']] });
    expect(assignInOrder([{ count: 2, candidates: ['x'] }])).toEqual({ ok: false, assigned: [1] });
  });
});
