import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { hashToken, issueToken } from '../../src/domain/tokens.js';
import { tokenFromHeaders } from '../../src/access/authenticate.js';

describe('tokens', () => {
  it('carry at least 256 random bits and are never stored in the clear', () => {
    const a = issueToken();
    const b = issueToken();
    expect(a.value).not.toBe(b.value);
    expect(Buffer.from(a.value.slice(3), 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(a.hash).toBe(hashToken(a.value));
    expect(a.hash).not.toContain(a.value);
    expect(a.value.startsWith(a.prefix)).toBe(true);
    expect(a.prefix.length).toBeLessThan(12);
  });

  it('are read from a Bearer header or from X-Auth-Token as OpenStack clients send it', () => {
    expect(tokenFromHeaders('Bearer abc', undefined)).toBe('abc');
    expect(tokenFromHeaders('bearer   abc ', undefined)).toBe('abc');
    expect(tokenFromHeaders(undefined, 'xyz')).toBe('xyz');
    expect(tokenFromHeaders('Basic Zm9vOmJhcg==', undefined)).toBeNull();
    expect(tokenFromHeaders(undefined, undefined)).toBeNull();
  });
});

describe('manual clock', () => {
  it('fires timers in time order as time is advanced, without real waiting', async () => {
    const clock = new ManualClock('2030-01-01T00:00:00Z');
    const fired: string[] = [];
    clock.setTimer(2_000, () => fired.push('b'));
    clock.setTimer(1_000, () => fired.push('a'));
    const cancelled = clock.setTimer(1_500, () => fired.push('never'));
    cancelled.cancel();
    const slept = clock.sleep(3_000).then(() => fired.push('c'));
    await clock.advance(2_500);
    expect(fired).toEqual(['a', 'b']);
    await clock.advance(500);
    await slept;
    expect(fired).toEqual(['a', 'b', 'c']);
    expect(clock.now().toISOString()).toBe('2030-01-01T00:00:03.000Z');
  });

  it('lets a chain of sleeps run through within one advance', async () => {
    const clock = new ManualClock();
    let steps = 0;
    const chain = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(100);
        steps++;
      }
    })();
    await clock.advance(300);
    await chain;
    expect(steps).toBe(3);
  });
});
