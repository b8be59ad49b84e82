import { describe, expect, it } from 'vitest';
import { busyIntervals, freeWindows, maySeeLease, type BookingDetail } from '../../src/domain/availability.js';

const H = 3_600_000;
const T0 = Date.parse('2030-01-01T00:00:00Z');
const at = (h: number) => new Date(T0 + h * H);
const booking = (project: string, startH: number, endH: number, gapH = 0.5, overrides: Partial<BookingDetail> = {}): BookingDetail => ({
  node_id: 'n1',
  lease_id: `lease-${project}-${startH}`,
  lease_name: `${project} run`,
  lease_state: 'pending',
  project_id: project,
  project_name: project,
  allocation_state: 'reserved',
  start: at(startH),
  end: at(endH),
  blocked_until: at(endH + gapH),
  ...overrides,
});
const lessee = { isAdmin: false, projectId: 'me' };
const node = { owner_project: { id: 'owner', name: 'owners' } };

describe('what a caller may see of a booking', () => {
  it('the operator, the lessee itself and the node owner know whose lease it is; anyone else does not', () => {
    const b = booking('them', 0, 1);
    expect(maySeeLease({ isAdmin: true, projectId: null }, node, b)).toBe(true);
    expect(maySeeLease({ isAdmin: false, projectId: 'them' }, node, b)).toBe(true);
    expect(maySeeLease({ isAdmin: false, projectId: 'owner' }, node, b)).toBe(true);
    expect(maySeeLease(lessee, node, b)).toBe(false);
    expect(maySeeLease({ isAdmin: false, projectId: null }, { owner_project: null }, b)).toBe(false);
  });
});

describe('busy intervals', () => {
  it("other projects' touching leases are merged into one busy stretch; the caller's own stay separate and named", () => {
    // them: 0–2 (+0.5 cleaning), others: 2.5–4 (+0.5), me: 5–6 (+0.5)
    const busy = busyIntervals(lessee, node, [booking('them', 0, 2), booking('others', 2.5, 4), booking('me', 5, 6)], T0);
    expect(busy.map((b) => [b.kind, (b.start - T0) / H, (b.end - T0) / H, b.lease?.name ?? null])).toEqual([
      ['lease', 0, 2, null],
      ['cleaning', 2, 2.5, null],
      ['lease', 2.5, 4, null],
      ['cleaning', 4, 4.5, null],
      ['lease', 5, 6, 'me run'],
      ['cleaning', 6, 6.5, 'me run'],
    ]);
    const noGap = busyIntervals(lessee, node, [booking('them', 0, 2, 0), booking('others', 2, 4, 0)], T0);
    expect(noGap.map((b) => [b.kind, (b.start - T0) / H, (b.end - T0) / H])).toEqual([['lease', 0, 4]]);
  });

  it('cleaning that overruns its gap lasts until now while the node is still being released', () => {
    const late = booking('me', 0, 1, 0.5, { allocation_state: 'releasing' });
    const [, cleaning] = busyIntervals(lessee, node, [late], T0 + 3 * H);
    expect(cleaning).toMatchObject({ kind: 'cleaning', start: T0 + H, end: T0 + 3 * H });
    const done = booking('me', 0, 1, 0.5, { allocation_state: 'released' });
    expect(busyIntervals(lessee, node, [done], T0 + 3 * H)[1]).toMatchObject({ end: T0 + 1.5 * H });
  });
});

describe('free windows', () => {
  const offer = (startH: number, endH: number | null, allowed: string[] | null = null) => ({
    start: at(startH),
    end: endH === null ? null : at(endH),
    project_id: 'owner',
    allowed_projects: allowed,
    withdrawn_at: null,
  });
  const window = { start: T0, end: T0 + 24 * H };

  it('lie inside the offers open to the caller, from now on, and leave each booking its cleaning gap before and after', () => {
    const busy = busyIntervals(lessee, node, [booking('them', 10, 12)], T0);
    const free = freeWindows(lessee, { ...node, maintenance: false, quarantined_at: null }, [offer(0, 20)], busy, window, T0 + 2 * H, 0.5 * H);
    expect(free.map((f) => [(f.start - T0) / H, (f.end - T0) / H])).toEqual([
      [2, 9.5],
      [12.5, 20],
    ]);
  });

  it('ignore offers not open to the caller; cover the whole window on a node its project owns; are empty in maintenance', () => {
    const healthy = { ...node, maintenance: false, quarantined_at: null };
    expect(freeWindows(lessee, healthy, [offer(0, null, ['someone'])], [], window, T0, 0)).toEqual([]);
    expect(freeWindows({ isAdmin: false, projectId: 'owner' }, healthy, [], [], window, T0, 0)).toEqual([{ start: T0, end: T0 + 24 * H }]);
    expect(freeWindows(lessee, { ...healthy, maintenance: true }, [offer(0, null)], [], window, T0, 0)).toEqual([]);
  });
});
