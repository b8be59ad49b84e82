import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/test-app.js';

/** The Keystone sign-in routes under the default, local identity: they say so, and change nothing. */
let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

describe('signing in under local identity', () => {
  it('says a Leasehold token is the way in, and the Keystone sign-in and sign-out answer 409 leaving the token working', async () => {
    expect((await t.request('GET', '/v1/auth/methods', { token: null })).body).toEqual({ identity: 'local', methods: ['token'] });
    const signIn = await t.request('POST', '/v1/auth/tokens', { token: null, body: { password: { user: 'admin', password: 'x' } } });
    expect(signIn.status).toBe(409);
    expect(signIn.body.error).toMatchObject({ code: 'conflict', details: { identity: 'local' } });
    const signOut = await t.request('DELETE', '/v1/auth/tokens');
    expect(signOut.status).toBe(409);
    expect((await t.request('GET', '/v1/me')).status).toBe(200);
  });
});
