import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeystoneApi } from '../test/support/keystone-api.js';
import { freePort, KEYSTONE_SCRIPT, ownedDataDir, PREFIX, runScript, type Cleanups } from './stack-processes.js';

/**
 * A real Keystone for section 4's `keystone` variant: Debian's Zed package from scripts/keystone-standalone.sh
 * (SQLite, uwsgi with one process and one thread, Keystone's in-memory cache on, bcrypt cost 4 for passwords), started
 * from a bootstrapped seed as the test suites start theirs (test/support/keystone.ts: the same seed dir, so a seed
 * either made is used by both). Driven over REST with the suites' KeystoneApi (test/support/keystone-api.ts).
 */

const REQUIRED = ['/usr/bin/keystone-manage', '/usr/bin/keystone-wsgi-public', '/usr/bin/uwsgi', '/usr/lib/uwsgi/plugins/python3_plugin.so'];
const SEED_PREFIX = 'leasehold-kseed-';

export const KEYSTONE_MISSING = 'skipped: no Keystone (scripts/keystone-standalone.sh install)';

export const keystoneInstalled = (): boolean => [...REQUIRED, KEYSTONE_SCRIPT].every((f) => existsSync(f));

/** The Keystone package's version, e.g. `Keystone 22.0.2 (Zed)`. */
export function keystoneVersion(): string {
  try {
    const version = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'keystone'], { encoding: 'utf8' }).replace(/^\d+:/, '');
    const release = Number(version.split('.')[0]) === 22 ? ' (Zed)' : '';
    return `Keystone ${version.replace(/-.*$/, '')}${release}`;
  } catch {
    return 'Keystone ?';
  }
}

/**
 * Starts a Keystone on a free port from the seed (made first when missing, ≈ 11 s), its stop pushed onto
 * `cleanups`; resolves to its API as the admin (project `admin`), whose `url` is the v3 root.
 */
export async function startKeystone(cleanups: Cleanups): Promise<KeystoneApi> {
  const seed = await keystoneSeed();
  const password = (JSON.parse(readFileSync(join(seed, 'admin.json'), 'utf8')) as { password: string }).password;
  let last = '';
  for (let attempt = 0; attempt < 2; attempt++) {
    const dataDir = ownedDataDir(PREFIX.keystone);
    const stop = async () => {
      await runScript(KEYSTONE_SCRIPT, ['stop', dataDir], 60_000);
      rmSync(dataDir, { recursive: true, force: true });
    };
    cleanups.push(stop); // before the start: a signal meanwhile stops what the script started so far
    const res = await runScript(KEYSTONE_SCRIPT, ['start', dataDir, '--port', String(await freePort()), '--from', seed], 180_000, {
      KEYSTONE_ADMIN_PASSWORD: '',
    });
    const url = res.stdout.trim().split('\n').pop() ?? '';
    if (res.code === 0 && /^http:\/\/127\.0\.0\.1:\d+\/v3$/.test(url)) return new KeystoneApi(url, { username: 'admin', password, projectName: 'admin' });
    last = `keystone-standalone.sh start failed (${res.code}):\n${res.stderr.slice(-4000)}`;
    cleanups.splice(cleanups.indexOf(stop), 1);
    await stop();
  }
  throw new Error(last);
}

/**
 * The bootstrapped data dir Keystones start from (`start --from`), one per machine, script and package version —
 * the name test/support/keystone.ts gives it. Made under the Keystone data-dir prefix with an owner.pid (a bench
 * killed meanwhile leaves it to the reapers), then renamed into place; a loser of a race with a test discards its copy.
 */
async function keystoneSeed(): Promise<string> {
  const version = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'keystone'], { encoding: 'utf8' });
  const key = createHash('sha256').update(readFileSync(KEYSTONE_SCRIPT)).update(version).digest('hex').slice(0, 16);
  const seed = join(tmpdir(), `${SEED_PREFIX}${key}`);
  if (existsSync(join(seed, 'bootstrapped'))) return seed;
  for (const name of readdirSync(tmpdir())) {
    if (name.startsWith(SEED_PREFIX) && name !== `${SEED_PREFIX}${key}`) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
  const dir = ownedDataDir(PREFIX.keystone);
  const res = await runScript(KEYSTONE_SCRIPT, ['bootstrap', dir], 300_000);
  if (res.code !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`keystone-standalone.sh bootstrap failed (${res.code}):\n${res.stderr.slice(-4000)}`);
  }
  rmSync(join(dir, 'owner.pid'));
  try {
    renameSync(dir, seed);
  } catch {
    rmSync(dir, { recursive: true, force: true }); // a test made it first
  }
  return seed;
}
