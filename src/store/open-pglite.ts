import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { migrate, type MigrateOptions } from './migrate.js';
import { PGliteDialect } from './pglite-dialect.js';
import { extractImageFile } from './extract-image.js';
import { buildImage, SHIPPED_IMAGE, shippedImage } from './pglite-image.js';
import { startPGlite } from './start-pglite.js';

export const MEMORY_DATA_DIR = 'memory://';

/**
 * A migrated in-memory database, as a data-directory image. Starting PGlite from an image skips initdb and the
 * migrations (~0.4 s instead of ~1.5 s), which is what makes a fresh database per test affordable. Built once
 * per process, on first use.
 */
let memoryImage: Promise<Blob> | null = null;

/**
 * Opens PGlite with the btree_gist extension and applies the migrations: in memory for `memory://` (tests), else
 * with its files in `<dataDir>/pgdata`. Returns the Kysely dialect that owns the instance.
 */
export async function openPGlite(dataDir: string, options: Pick<MigrateOptions, 'logger'> = {}): Promise<PGliteDialect> {
  let pglite: PGlite;
  let lock: DataDirLock | null = null;
  if (dataDir === MEMORY_DATA_DIR) {
    memoryImage ??= buildImage().catch((err: unknown) => {
      memoryImage = null; // let a later call try again
      throw err;
    });
    pglite = await startPGlite(MEMORY_DATA_DIR, { loadDataDir: await memoryImage, startParams: startParams(0) });
  } else {
    const pgdata = join(dataDir, 'pgdata');
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    lock = await lockDataDir(dataDir);
    try {
      // A data directory never initialised starts from the shipped image (no initdb); an existing one as it is.
      const fresh = !existsSync(join(pgdata, 'PG_VERSION'));
      const unpacked = fresh && (await unpackShippedImage(pgdata));
      const image = fresh && !unpacked ? await shippedImage() : null;
      if (!unpacked) await mkdir(pgdata, { recursive: true, mode: 0o700 });
      const size = image ? 0 : await directorySize(pgdata);
      pglite = await startPGlite(pgdata, { startParams: startParams(size), ...(image ? { loadDataDir: image } : {}) });
    } catch (err) {
      await lock.release();
      throw err;
    }
  }
  const dialect = new PGliteDialect(pglite, lock ? () => lock.release() : undefined);
  try {
    // A no-op on a current image; on a data directory from an older version it brings the schema up to date.
    await migrate((fn) => dialect.runExclusive(fn), options);
  } catch (err) {
    await pglite.close().catch(() => undefined);
    await lock?.release();
    throw err;
  }
  return dialect;
}

/**
 * A new data directory from the shipped image, unpacked by Node (extract-image.ts) next to `pgdata` and renamed
 * into place, so a start that dies half-way leaves no `pgdata` with a PG_VERSION over missing files. False when
 * there is no image (a checkout not built) or `pgdata` holds files without being a database: then PGlite loads
 * the image or runs initdb itself, as before.
 */
async function unpackShippedImage(pgdata: string): Promise<boolean> {
  try {
    await rmdir(pgdata);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    if (code !== 'ENOENT') throw err;
  }
  const temp = `${pgdata}.unpacking`;
  await rm(temp, { recursive: true, force: true }); // left by a start that died while unpacking
  try {
    await extractImageFile(SHIPPED_IMAGE, temp);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(SHIPPED_IMAGE)) return false;
    throw err;
  }
  await rename(temp, pgdata);
  return true;
}

/** PostgreSQL's buffer cache inside PGlite: a quarter of the data, between these bounds (PGlite's own default: 128 MiB). */
const MIN_BUFFERS_MIB = 16;
const MAX_BUFFERS_MIB = 128;

/**
 * PGlite's start parameters with its buffer cache sized to the data: the buffers live in PGlite's WebAssembly
 * memory, which never shrinks, and behind them is the operating system's cache (a data directory) or the same
 * bytes in memory (memory://). 128 MiB of buffers for an idle demo's 15 MiB of data made a third of its resident
 * memory (measured: PGlite alone 294 → 178 MiB with 16 MiB).
 */
function startParams(dataBytes: number): string[] {
  const mib = Math.min(MAX_BUFFERS_MIB, Math.max(MIN_BUFFERS_MIB, Math.ceil(dataBytes / 4 / 2 ** 20)));
  return [...PGlite.defaultStartParams, '-c', `shared_buffers=${mib}MB`];
}

async function directorySize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}
