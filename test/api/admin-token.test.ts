import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { hashToken, issueToken } from '../../src/domain/tokens.js';
import { createLogger } from '../../src/logger.js';
import { bootstrapAdmin } from '../../src/server/bootstrap-admin.js';
import { openStore } from '../../src/store/open-store.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';

describe('token prefixes', () => {
  let t: TestApp;
  let adminId = '';
  beforeAll(async () => {
    t = await startTestApp([]);
    adminId = (await t.request('GET', '/v1/me')).body.user.id;
  });
  afterAll(() => t.close());

  it('an operator-chosen admin token is listed by a fingerprint of its hash, never by its first characters', async () => {
    const res = await t.request('GET', `/v1/tokens?user_id=${adminId}`);
    expect(res.status).toBe(200);
    const [admin] = res.body.tokens;
    expect(admin.prefix).toBe(`sha256:${hashToken(ADMIN_TOKEN).slice(0, 8)}`);
    // Not even a few characters of the chosen value (it was "lh_test-a": six characters an operator picked).
    expect(admin.prefix).not.toContain(ADMIN_TOKEN.slice(3, 6));
  });

  it('an issued token is listed by lh_ and four of its random characters', async () => {
    const created = await t.request('POST', '/v1/tokens', { body: { user_id: adminId, description: 'second' } });
    expect(created.status).toBe(201);
    const token: string = created.body.token;
    const listed = (await t.request('GET', `/v1/tokens?user_id=${adminId}`)).body.tokens.find((x: { id: string }) => x.id === created.body.id);
    expect(listed.prefix).toBe(token.slice(0, 7));
    expect(listed.prefix).toMatch(/^lh_[A-Za-z0-9_-]{4}$/);
    expect(issueToken().prefix).toHaveLength(7);
  });
});

describe('the first start', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function firstStart(terminal: boolean): Promise<{ printed: string[]; token: string; file: string }> {
    const dataDir = await mkdtemp(join(tmpdir(), 'leasehold-bootstrap-'));
    dirs.push(dataDir);
    const store = await openStore({ dataDir: 'memory://' });
    const printed: string[] = [];
    try {
      const clock = new ManualClock('2030-01-01T00:00:00Z');
      const logger = createLogger('silent');
      await bootstrapAdmin({ store, clock, logger, dataDir, adminToken: null, print: (line) => printed.push(line), terminal });
      const file = join(dataDir, 'admin-token');
      return { printed, token: (await readFile(file, 'utf8')).trim(), file };
    } finally {
      await store.close();
    }
  }

  it('shows the new admin token on a terminal, and only names its file when stdout is a pipe or a log', async () => {
    const onTerminal = await firstStart(true);
    expect(onTerminal.printed.join('\n')).toContain(onTerminal.token);
    const piped = await firstStart(false);
    expect(piped.token).toMatch(/^lh_/);
    expect(piped.printed.join('\n')).not.toContain(piped.token);
    expect(piped.printed).toEqual([`Admin token saved to ${piped.file} (mode 0600; shown only when stdout is a terminal)`]);
  });
});
