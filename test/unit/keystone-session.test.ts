import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/manual-clock.js';
import type { IssuedToken, KeystoneClient } from '../../src/keystone/keystone-client.js';
import { KeystoneSession } from '../../src/keystone/keystone-session.js';

const MINUTE = 60_000;

/** A Keystone that issues Leasehold's service token with a given lifetime and counts the sign-ins. */
function session(lifeMs: number) {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  let signIns = 0;
  const client = {
    async issueToken(): Promise<IssuedToken> {
      signIns++;
      const now = clock.now();
      return {
        token: `service-${signIns}`,
        info: {
          user: { id: 'u', name: 'leasehold', domainName: 'Default' },
          project: { id: 'p', name: 'service', domainName: 'Default' },
          system: false,
          roles: ['admin', 'service'],
          expiresAt: new Date(now.getTime() + lifeMs),
          issuedAt: now,
          catalog: [],
        },
      };
    },
  } as unknown as KeystoneClient;
  const s = new KeystoneSession(client, { kind: 'password' } as never, clock);
  return { s, clock, signIns: () => signIns };
}

describe('KeystoneSession', () => {
  it('keeps an hour-long service token for 55 minutes and signs in again 5 minutes before it expires', async () => {
    const { s, clock, signIns } = session(60 * MINUTE);
    expect(await s.token()).toBe('service-1');
    await clock.advance(54 * MINUTE);
    expect(await s.token()).toBe('service-1');
    await clock.advance(1 * MINUTE + 1);
    expect(await s.token()).toBe('service-2');
    expect(signIns()).toBe(2);
  });

  it('renews a 2-minute service token a quarter of its life before its end, not on every call', async () => {
    const { s, clock, signIns } = session(2 * MINUTE);
    for (let i = 0; i < 10; i++) {
      await s.token();
      await clock.advance(8_000); // 80 s in all: still inside the first 90 s
    }
    expect(signIns()).toBe(1);
    await clock.advance(11_000);
    expect(await s.token()).toBe('service-2');
  });

  it('shares one sign-in among concurrent callers and signs in again once the token is refused', async () => {
    const { s, signIns } = session(60 * MINUTE);
    const tokens = await Promise.all([s.token(), s.token(), s.token()]);
    expect(new Set(tokens)).toEqual(new Set(['service-1']));
    s.invalidate('service-1');
    expect(await s.token()).toBe('service-2');
    expect(signIns()).toBe(2);
  });
});
