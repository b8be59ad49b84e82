import { readFile, rename, writeFile } from 'node:fs/promises';
import type { PGlite } from '@electric-sql/pglite';
import { migrate } from './migrate.js';
import { PGliteDialect } from './pglite-dialect.js';
import { startPGlite } from './start-pglite.js';

/**
 * A migrated, empty PGlite data directory as a tarball, made once by `npm run build` (dist/pglite-image.tar.gz,
 * shipped with the package). A fresh data directory is loaded from it instead of running initdb inside
 * WebAssembly on every first start: initdb alone took 5.2 s of a 6.1 s first start (issue 15). The migrations
 * still run after loading it, so an image older than the migrations only costs the newer ones.
 */
export const SHIPPED_IMAGE = new URL('../../dist/pglite-image.tar.gz', import.meta.url);

/** The shipped image, or null when there is none (a checkout not built yet): then initdb runs as before. */
export async function shippedImage(): Promise<Blob | null> {
  try {
    return new Blob([await readFile(SHIPPED_IMAGE)]);
  } catch {
    return null;
  }
}

/** A fresh in-memory database, initialised (from the shipped image when there is one) and migrated, as a tarball. */
export async function buildImage(compression: 'none' | 'gzip' = 'none'): Promise<Blob> {
  const image = await shippedImage();
  const pglite = await startPGlite('memory://', { ...(image ? { loadDataDir: image } : {}) });
  try {
    await migrate((fn) => new PGliteDialect(pglite).runExclusive(fn));
    await dropTemplateDatabases(pglite);
    // A checkpoint first, so the tarball holds the data files rather than a write-ahead log to replay at start.
    await pglite.exec('checkpoint');
    return await pglite.dumpDataDir(compression);
  } finally {
    await pglite.close();
  }
}

/**
 * Leasehold uses the database `postgres` only and never creates one, so the image leaves out initdb's
 * `template0` and `template1`: 602 of its 1,109 files and 14 of its 40 MiB, which every new data directory
 * wrote at its first start (unpacking it 0.95 → 0.35 s here, load ≈ 4).
 */
async function dropTemplateDatabases(pglite: PGlite): Promise<void> {
  const { rows } = await pglite.query<{ datname: string }>("select datname from pg_database where datname in ('template0', 'template1')");
  for (const { datname } of rows) {
    await pglite.exec(`alter database ${datname} is_template false`);
    await pglite.exec(`drop database ${datname}`);
  }
}

/** `npm run build`'s last step: writes dist/pglite-image.tar.gz (atomically). */
export async function writeShippedImage(): Promise<void> {
  const image = await buildImage('gzip');
  const temp = new URL(`${SHIPPED_IMAGE.href}.tmp`);
  await writeFile(temp, Buffer.from(await image.arrayBuffer()));
  await rename(temp, SHIPPED_IMAGE);
}
