import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('configuration', () => {
  it('defaults to the embedded store, the simulated driver and a per-user data directory', () => {
    const config = loadConfig({ HOME: '/home/ada' });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      dataDir: '/home/ada/.local/share/leasehold',
      databaseUrl: null,
      driver: 'simulated',
      syncIntervalMs: 60_000,
      reconcileIntervalMs: 30_000,
      failureWatchMs: 5_000,
      policyFile: null,
      cleaningGapMs: 600_000,
      markConcurrency: 4,
      role: 'all',
      webhookUrl: null,
    });
    expect(loadConfig({ LEASEHOLD_CLEANING_GAP: '0s' }).cleaningGapMs).toBe(0);
    expect(loadConfig({ LEASEHOLD_FAILURE_WATCH_INTERVAL: '0' }).failureWatchMs).toBe(0);
    expect(loadConfig({ LEASEHOLD_MARK_CONCURRENCY: '16' }).markConcurrency).toBe(16);
  });

  it("gives a PostgreSQL store a data directory of its own, so it never writes over the embedded store's admin token", () => {
    const embedded = loadConfig({ HOME: '/home/ada' }).dataDir;
    const pg = loadConfig({ HOME: '/home/ada', DATABASE_URL: 'postgres://lh:s3cret@db.lab:5432/leasehold' }).dataDir;
    expect(pg).not.toBe(embedded);
    expect(pg.startsWith(`${embedded}/postgres-`)).toBe(true);
    expect(pg).not.toContain('s3cret');
    // The same database (another password) is the same directory; another database another one.
    expect(loadConfig({ HOME: '/home/ada', DATABASE_URL: 'postgres://lh:rotated@db.lab/leasehold' }).dataDir).toBe(pg);
    expect(loadConfig({ HOME: '/home/ada', DATABASE_URL: 'postgres://lh@db.lab/other' }).dataDir).not.toBe(pg);
    // Said outright, it is used as it is.
    expect(loadConfig({ HOME: '/home/ada', DATABASE_URL: 'postgres://db/x', LEASEHOLD_DATA_DIR: '/srv/lh' }).dataDir).toBe('/srv/lh');
  });

  it('reads the simulated inventory from a file when LEASEHOLD_SIMULATED_NODES is a path or @path, and names an unreadable one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'leasehold-config-'));
    try {
      writeFileSync(join(dir, 'nodes.json'), '[{"name":"n1"}]');
      expect(loadConfig({ LEASEHOLD_SIMULATED_NODES: `@${join(dir, 'nodes.json')}` }).simulatedNodesJson).toBe('[{"name":"n1"}]');
      expect(loadConfig({ LEASEHOLD_SIMULATED_NODES: join(dir, 'nodes.json') }).simulatedNodesJson).toBe('[{"name":"n1"}]');
      expect(loadConfig({ LEASEHOLD_SIMULATED_NODES: '[]' }).simulatedNodesJson).toBe('[]');
      expect(() => loadConfig({ LEASEHOLD_SIMULATED_NODES: join(dir, 'missing.json') })).toThrow(/names a file that cannot be read/);
      expect(() => loadConfig({ LEASEHOLD_SIMULATED_NODES: `@${join(dir, 'missing.json')}` })).toThrow(/LEASEHOLD_SIMULATED_NODES names a file that cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives console tokens 10 minutes unless LEASEHOLD_CONSOLE_TOKEN_TTL says otherwise', () => {
    expect(loadConfig({}).consoleTokenTtlMs).toBe(600_000);
    expect(loadConfig({ LEASEHOLD_CONSOLE_TOKEN_TTL: '90s' }).consoleTokenTtlMs).toBe(90_000);
    expect(loadConfig({ LEASEHOLD_CONSOLE_TOKEN_TTL: 'PT1H' }).consoleTokenTtlMs).toBe(3_600_000);
    expect(() => loadConfig({ LEASEHOLD_CONSOLE_TOKEN_TTL: '0s' })).toThrow(/LEASEHOLD_CONSOLE_TOKEN_TTL/);
    expect(() => loadConfig({ LEASEHOLD_CONSOLE_TOKEN_TTL: 'a while' })).toThrow(/LEASEHOLD_CONSOLE_TOKEN_TTL/);
  });

  it('takes LEASEHOLD_PUBLIC_URL without its trailing slash, and refuses one that is not http(s)', () => {
    expect(loadConfig({}).publicUrl).toBeNull();
    expect(loadConfig({ LEASEHOLD_PUBLIC_URL: 'https://lh.example/leasehold/' }).publicUrl).toBe('https://lh.example/leasehold');
    expect(() => loadConfig({ LEASEHOLD_PUBLIC_URL: 'lh.example' })).toThrow(/LEASEHOLD_PUBLIC_URL/);
    expect(() => loadConfig({ LEASEHOLD_PUBLIC_URL: 'ws://lh.example' })).toThrow(/LEASEHOLD_PUBLIC_URL/);
  });

  it('reads the environment, and flags win over it', () => {
    const env = {
      LEASEHOLD_PORT: '9000',
      LEASEHOLD_HOST: '0.0.0.0',
      LEASEHOLD_DATA_DIR: '/srv/lh',
      DATABASE_URL: 'postgres://db/lh',
      LEASEHOLD_SYNC_INTERVAL: '15s',
    };
    expect(loadConfig(env)).toMatchObject({ port: 9000, host: '0.0.0.0', dataDir: '/srv/lh', databaseUrl: 'postgres://db/lh', syncIntervalMs: 15_000 });
    expect(loadConfig(env, { port: 0, host: '127.0.0.2' })).toMatchObject({ port: 0, host: '127.0.0.2' });
  });

  it('names the variable when a value is wrong', () => {
    expect(() => loadConfig({ LEASEHOLD_PORT: 'eighty' })).toThrow(/LEASEHOLD_PORT/);
    expect(() => loadConfig({ LEASEHOLD_PORT: '70000' })).toThrow(/LEASEHOLD_PORT/);
    expect(() => loadConfig({ LEASEHOLD_DRIVER: 'maas' })).toThrow(/LEASEHOLD_DRIVER/);
    expect(() => loadConfig({ LEASEHOLD_SYNC_INTERVAL: 'often' })).toThrow(/LEASEHOLD_SYNC_INTERVAL/);
    expect(() => loadConfig({ LEASEHOLD_SYNC_INTERVAL: '0s' })).toThrow(/LEASEHOLD_SYNC_INTERVAL/);
    expect(() => loadConfig({ LEASEHOLD_RECONCILE_INTERVAL: 'never' })).toThrow(/LEASEHOLD_RECONCILE_INTERVAL/);
    expect(() => loadConfig({ LEASEHOLD_CLEANING_GAP: 'a bit' })).toThrow(/LEASEHOLD_CLEANING_GAP/);
    expect(() => loadConfig({ LEASEHOLD_MARK_CONCURRENCY: '0' })).toThrow(/LEASEHOLD_MARK_CONCURRENCY/);
    expect(() => loadConfig({ LEASEHOLD_MARK_CONCURRENCY: 'lots' })).toThrow(/LEASEHOLD_MARK_CONCURRENCY/);
    expect(() => loadConfig({ LEASEHOLD_ROLE: 'both' })).toThrow(/LEASEHOLD_ROLE/);
    expect(() => loadConfig({ LEASEHOLD_WEBHOOK_URL: 'https://hooks.example/lh' })).toThrow(/LEASEHOLD_WEBHOOK_SECRET/);
    expect(() => loadConfig({ LEASEHOLD_WEBHOOK_URL: 'ftp://x', LEASEHOLD_WEBHOOK_SECRET: 's' })).toThrow(/http/);
  });

  it('reads the Ironic block only with the ironic driver', () => {
    expect(loadConfig({}).ironic).toBeNull();
    expect(loadConfig({ LEASEHOLD_DRIVER: 'ironic', IRONIC_URL: 'http://127.0.0.1:6385' }).ironic).toEqual({
      url: 'http://127.0.0.1:6385',
      auth: { type: 'none' },
      timeoutMs: 30_000,
    });
    const basic = { LEASEHOLD_DRIVER: 'ironic', IRONIC_URL: 'https://ironic.example:6385', IRONIC_AUTH_TYPE: 'http_basic', IRONIC_USERNAME: 'lh', IRONIC_PASSWORD: 'pw', IRONIC_TIMEOUT: '5s' };
    expect(loadConfig(basic).ironic).toEqual({
      url: 'https://ironic.example:6385',
      auth: { type: 'http_basic', username: 'lh', password: 'pw' },
      timeoutMs: 5_000,
    });
    const token = { LEASEHOLD_DRIVER: 'ironic', IRONIC_URL: 'http://i:6385', IRONIC_AUTH_TYPE: 'token', IRONIC_TOKEN: 'tok' };
    expect(loadConfig(token).ironic?.auth).toEqual({ type: 'token', token: 'tok' });
  });

  it('names the Ironic variable that is missing or wrong', () => {
    const ironic = { LEASEHOLD_DRIVER: 'ironic', IRONIC_URL: 'http://127.0.0.1:6385' };
    expect(() => loadConfig({ LEASEHOLD_DRIVER: 'ironic' })).toThrow(/IRONIC_URL/);
    expect(() => loadConfig({ ...ironic, IRONIC_URL: 'not a url' })).toThrow(/IRONIC_URL/);
    expect(() => loadConfig({ ...ironic, IRONIC_URL: 'ftp://ironic' })).toThrow(/IRONIC_URL/);
    expect(() => loadConfig({ ...ironic, IRONIC_URL: 'http://u:p@ironic:6385' })).toThrow(/IRONIC_URL/);
    expect(() => loadConfig({ ...ironic, IRONIC_AUTH_TYPE: 'keystone' })).toThrow(/IRONIC_AUTH_TYPE/);
    expect(() => loadConfig({ ...ironic, IRONIC_AUTH_TYPE: 'http_basic', IRONIC_PASSWORD: 'pw' })).toThrow(/IRONIC_USERNAME/);
    expect(() => loadConfig({ ...ironic, IRONIC_AUTH_TYPE: 'http_basic', IRONIC_USERNAME: 'lh' })).toThrow(/IRONIC_PASSWORD/);
    expect(() => loadConfig({ ...ironic, IRONIC_AUTH_TYPE: 'token' })).toThrow(/IRONIC_TOKEN/);
    expect(() => loadConfig({ ...ironic, IRONIC_TIMEOUT: 'soon' })).toThrow(/IRONIC_TIMEOUT/);
    expect(() => loadConfig({ ...ironic, IRONIC_TIMEOUT: '0s' })).toThrow(/IRONIC_TIMEOUT/);
  });

  it('refuses an operator-chosen admin token shorter than 32 characters, saying how long it must be', () => {
    expect(() => loadConfig({ LEASEHOLD_ADMIN_TOKEN: 'a' })).toThrow(/LEASEHOLD_ADMIN_TOKEN must be at least 32 characters \(it has 1\)/);
    expect(() => loadConfig({ LEASEHOLD_ADMIN_TOKEN: 'x'.repeat(31) })).toThrow(/LEASEHOLD_ADMIN_TOKEN/);
    expect(() => loadConfig({ LEASEHOLD_ADMIN_TOKEN: `${'x'.repeat(20)} ${'y'.repeat(20)}` })).toThrow(/whitespace/);
    expect(loadConfig({ LEASEHOLD_ADMIN_TOKEN: ` ${'x'.repeat(32)}\n` }).adminToken).toBe('x'.repeat(32));
    expect(loadConfig({}).adminToken).toBeNull();
    expect(loadConfig({ LEASEHOLD_ADMIN_TOKEN: '' }).adminToken).toBeNull();
  });

  it('under Keystone: the v3 root and service credentials (a password user in a project, or an application credential), a 30 s validation cache, internal endpoints', () => {
    expect(loadConfig({}).identity).toBe('local');
    expect(loadConfig({}).keystone).toBeNull();
    const base = { LEASEHOLD_IDENTITY: 'keystone', KEYSTONE_URL: 'http://keystone:5000/v3' };
    expect(loadConfig({ ...base, KEYSTONE_USERNAME: 'leasehold', KEYSTONE_PASSWORD: 'pw' })).toMatchObject({
      identity: 'keystone',
      keystone: {
        url: 'http://keystone:5000/v3',
        credentials: { type: 'password', username: 'leasehold', password: 'pw', userDomainName: 'Default', projectName: 'service', projectDomainName: 'Default' },
        cacheTtlMs: 30_000,
        adminProject: 'admin',
        interface: 'internal',
        region: null,
      },
    });
    const ac = loadConfig({ ...base, KEYSTONE_APPLICATION_CREDENTIAL_ID: 'ac1', KEYSTONE_APPLICATION_CREDENTIAL_SECRET: 's', KEYSTONE_TOKEN_CACHE_TTL: '10s', KEYSTONE_REGION: 'RegionTwo' });
    expect(ac.keystone).toMatchObject({ credentials: { type: 'application_credential', id: 'ac1', secret: 's' }, cacheTtlMs: 10_000, region: 'RegionTwo' });
    expect(() => loadConfig(base)).toThrow(/KEYSTONE_USERNAME and KEYSTONE_PASSWORD/);
    expect(() => loadConfig({ LEASEHOLD_IDENTITY: 'keystone' })).toThrow(/KEYSTONE_URL is required/);
    expect(() => loadConfig({ ...base, KEYSTONE_APPLICATION_CREDENTIAL_ID: 'ac1' })).toThrow(/KEYSTONE_APPLICATION_CREDENTIAL_SECRET/);
    expect(() => loadConfig({ LEASEHOLD_IDENTITY: 'ldap' })).toThrow(/LEASEHOLD_IDENTITY must be "local" or "keystone"/);
  });

  it("Ironic behind Keystone: IRONIC_AUTH_TYPE=keystone takes Leasehold's service credentials and, without IRONIC_URL, the catalog's endpoint", () => {
    const env = { LEASEHOLD_DRIVER: 'ironic', IRONIC_AUTH_TYPE: 'keystone', KEYSTONE_URL: 'http://keystone:5000', KEYSTONE_USERNAME: 'leasehold', KEYSTONE_PASSWORD: 'pw' };
    const config = loadConfig(env);
    expect(config.identity).toBe('local');
    expect(config.ironic).toMatchObject({ url: null, auth: { type: 'keystone' } });
    expect(config.keystone?.url).toBe('http://keystone:5000');
    expect(loadConfig({ ...env, IRONIC_URL: 'http://ironic:6385' }).ironic?.url).toBe('http://ironic:6385');
    expect(() => loadConfig({ LEASEHOLD_DRIVER: 'ironic', IRONIC_AUTH_TYPE: 'keystone' })).toThrow(/KEYSTONE_URL/);
  });
});
