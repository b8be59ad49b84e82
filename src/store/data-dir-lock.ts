import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConflictError } from '../domain/errors.js';

export interface DataDirLock {
  release(): Promise<void>;
}

/**
 * Embedded PGlite keeps its database in files that one process at a time may open: a second process would
 * corrupt them. A lock file holding the owner's pid enforces that; a lock left by a process that died (kill -9,
 * power loss) is taken over, since its pid no longer runs.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, 'pgdata.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return { release: () => rm(path, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder)) {
      throw new ConflictError(
        `the embedded database in ${dataDir} is in use by process ${holder}; stop it first, or set DATABASE_URL to ` +
          'PostgreSQL to run several Leasehold processes on one database',
        { details: { data_dir: dataDir, pid: holder } },
      );
    }
    // Stale: its process is gone. Replace it and try once more (another starter may race us for it).
    await rm(path, { force: true });
  }
  throw new ConflictError(`could not lock the embedded database in ${dataDir}; another process is starting on it`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
