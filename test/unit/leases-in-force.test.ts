import { describe, expect, it } from 'vitest';
import { LeasesInForce } from '../../src/leasing/leases-in-force.js';
import type { LeaseInForce, LeaseInForceChanges, Store } from '../../src/store/store.js';

const T = Date.parse('2026-11-29T00:00:00Z');
const HOUR = 3_600_000;

/** A store whose answers are set by the test, and whose reads can be held back to interleave two callers. */
function scripted() {
  let holder: string | null = 'astro';
  let until = Infinity;
  const changed: string[] = [];
  const held: (() => void)[] = [];
  let holdNext = false;
  const calls = { changes: 0, reads: [] as string[][] };
  const store: Pick<Store, 'leaseInForceChanges' | 'leasesInForce'> = {
    async leaseInForceChanges(since): Promise<LeaseInForceChanges> {
      calls.changes++;
      const nodeIds = since === null ? [] : changed.splice(0);
      return { watermark: String(calls.changes), full: since === null, nodeIds, projectIds: [] };
    },
    async leasesInForce(ids): Promise<readonly LeaseInForce[]> {
      calls.reads.push([...ids]);
      // The answer as of this read's snapshot, handed back later when held.
      const snapshot = holder;
      if (holdNext) {
        holdNext = false;
        await new Promise<void>((resolve) => held.push(resolve));
      }
      return ids.map((id) => ({
        node_id: id,
        lease: snapshot === null ? null : { lease_id: `lease-${snapshot}`, project_id: snapshot, end: new Date(T + 10 * HOUR) },
        lessee_name: snapshot,
        until,
      }));
    },
  };
  return {
    store,
    calls,
    write(next: string | null) {
      holder = next;
      changed.push('n1');
    },
    setUntil(ms: number) {
      until = ms;
    },
    holdNextRead() {
      holdNext = true;
    },
    release() {
      held.splice(0).forEach((r) => r());
    },
  };
}

const name = async (copy: LeasesInForce, at = T) => (await copy.at(['n1'], new Date(at)))[0]!.lessee_name;

describe("a replica's copy of the leases in force", () => {
  it('reads a node once, then answers from the copy while nothing is written', async () => {
    const s = scripted();
    const copy = new LeasesInForce(s.store);
    expect([await name(copy), await name(copy), await name(copy)]).toEqual(['astro', 'astro', 'astro']);
    expect(s.calls.reads).toEqual([['n1']]);
    expect(s.calls.changes).toBe(3);
  });

  it('reads a node again after a write to it, and after the instant its answer runs out', async () => {
    const s = scripted();
    s.setUntil(T + HOUR);
    const copy = new LeasesInForce(s.store);
    expect(await name(copy)).toBe('astro');
    s.write('geo');
    expect(await name(copy)).toBe('geo');
    expect(await name(copy, T + HOUR - 1)).toBe('geo');
    expect(s.calls.reads).toHaveLength(2);
    expect(await name(copy, T + HOUR)).toBe('geo');
    expect(s.calls.reads).toHaveLength(3);
    // An instant before the one it was read for is not answered from the copy either.
    await name(copy, T - 1);
    expect(s.calls.reads).toHaveLength(4);
  });

  it('does not keep a read that began before a change another caller has already seen', async () => {
    const s = scripted();
    const copy = new LeasesInForce(s.store);
    await name(copy);
    s.write('geo');
    // The first caller sees the change and reads, but its read (made as of 'geo') is held back...
    s.holdNextRead();
    const slow = name(copy);
    await new Promise((r) => setTimeout(r, 0));
    // ...while the lease changes again and a second caller sees that change and reads the newest answer.
    s.write(null);
    expect(await name(copy)).toBeNull();
    s.release();
    expect(await slow).toBe('geo');
    // The slow read landed after the second change was seen: it answered its own caller and was not kept.
    expect(await name(copy)).toBeNull();
  });
});
