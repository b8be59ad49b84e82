import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startServer } from '../../src/server/start-server.js';
import { openStore } from '../../src/store/open-store.js';

/** `leasehold serve` opens the embedded store before loading the server (serve-command.ts) and hands it over. */
describe('a server handed its embedded store while it opens', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'leasehold-early-store-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('closes it when the start fails on a policy file with a mistake: the data directory is free for the next start', async () => {
    const policyFile = join(dataDir, 'policy.yaml');
    await writeFile(policyFile, 'rules: [unclosed\n');
    const env = { LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_POLICY_FILE: policyFile, LEASEHOLD_PORT: '0' };
    const config = loadConfig(env, {});
    const logger = createLogger('silent');
    await expect(startServer(config, { logger, store: openStore({ dataDir, logger }) })).rejects.toThrow(/policy/i);
    expect(existsSync(join(dataDir, 'pgdata.lock'))).toBe(false);
    const again = await openStore({ dataDir });
    await again.close();
  });

  it('answers /healthz with its store usable and keeps what was written across a restart', async () => {
    const config = loadConfig({ LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_PORT: '0', LEASEHOLD_ADMIN_TOKEN: 'lh_early-store-admin-token-0123456789abcdef' }, {});
    const logger = createLogger('silent');
    const first = await startServer(config, { logger, print: () => undefined, store: openStore({ dataDir, logger }) });
    try {
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
      await first.store.createProject({ name: 'kept' }, new Date('2026-01-01T00:00:00Z'));
    } finally {
      await first.close();
    }
    const second = await startServer(config, { logger, print: () => undefined, store: openStore({ dataDir, logger }) });
    try {
      expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
      expect(await second.store.findProject('kept')).not.toBeNull();
    } finally {
      await second.close();
    }
  });
});
