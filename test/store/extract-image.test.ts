import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractImage } from '../../src/store/extract-image.js';
import { openStore } from '../../src/store/open-store.js';
import { SHIPPED_IMAGE } from '../../src/store/pglite-image.js';
import { T0 } from './contract/fixtures.js';

const hasImage = existsSync(SHIPPED_IMAGE);

/** A ustar archive of the given entries (a trailing slash names a directory), gzipped as PGlite's images are. */
function tarGz(entries: Array<[string, Uint8Array | null]>): Uint8Array {
  const blocks: Buffer[] = [];
  for (const [name, data] of entries) {
    const header = Buffer.alloc(512);
    header.write(name, 0, 100, 'utf8');
    header.write('0000600\0', 100);
    header.write(`${(data?.length ?? 0).toString(8).padStart(11, '0')}\0`, 124);
    header.write(data ? '0' : '5', 156);
    header.write('ustar\0' + '00', 257);
    header.fill(' ', 148, 156);
    header.write(`${header.reduce((a, b) => a + b, 0).toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header);
    if (data) blocks.push(Buffer.from(data), Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}

async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe('unpacking a data-directory image', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'leasehold-image-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes every file with the bytes of the image, a file ending in zeros keeping its size', async () => {
    const tail = new Uint8Array(3 * 8192);
    tail[5] = 7;
    await extractImage(tarGz([['/base/', null], ['/base/5/', null], ['/base/5/1259', tail], ['/PG_VERSION', Buffer.from('18\n')], ['/empty', new Uint8Array(0)]]), join(dir, 'pgdata'));
    expect(await filesUnder(join(dir, 'pgdata'))).toEqual(['PG_VERSION', 'base/5/1259', 'empty']);
    expect(new Uint8Array(await readFile(join(dir, 'pgdata', 'base/5/1259')))).toEqual(tail);
    expect(await readFile(join(dir, 'pgdata', 'PG_VERSION'), 'utf8')).toBe('18\n');
    expect((await stat(join(dir, 'pgdata', 'empty'))).size).toBe(0);
  });

  it('refuses an entry whose path leaves the data directory', async () => {
    await expect(extractImage(tarGz([['/../escaped', Buffer.from('x')]]), join(dir, 'pgdata'))).rejects.toThrow(/outside the data directory/);
    expect(existsSync(join(dir, 'escaped'))).toBe(false);
  });

  it.skipIf(!hasImage)('lays down the shipped image as tar itself would, the zeros after its write-ahead log\'s last record taking no disk', async () => {
    const ours = join(dir, 'ours');
    const theirs = join(dir, 'theirs');
    await extractImage(await readFile(SHIPPED_IMAGE), ours);
    await mkdir(theirs);
    execFileSync('tar', ['-xzf', new URL(SHIPPED_IMAGE).pathname, '-C', theirs], { stdio: 'ignore' });
    const files = await filesUnder(theirs);
    expect(await filesUnder(ours)).toEqual(files);
    for (const file of files) expect((await readFile(join(ours, file))).equals(await readFile(join(theirs, file))), file).toBe(true);
    const wal = (await readdir(join(ours, 'pg_wal'))).find((f) => /^[0-9A-F]{24}$/.test(f))!;
    const walStat = await stat(join(ours, 'pg_wal', wal));
    expect(walStat.blocks * 512).toBeLessThan(walStat.size);
  });
});

describe.skipIf(!hasImage)('a new embedded data directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'leasehold-fresh-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is unpacked beside pgdata and renamed into place: what a start killed while unpacking left is replaced', async () => {
    await mkdir(join(dir, 'pgdata.unpacking', 'base'), { recursive: true });
    await writeFile(join(dir, 'pgdata.unpacking', 'PG_VERSION'), 'half\n');
    const store = await openStore({ dataDir: dir });
    try {
      await store.createProject({ name: 'after-a-crash' }, T0);
      expect((await store.findProject('after-a-crash'))?.created_at).toEqual(T0);
    } finally {
      await store.close();
    }
    expect(existsSync(join(dir, 'pgdata.unpacking'))).toBe(false);
    expect(await readFile(join(dir, 'pgdata', 'PG_VERSION'), 'utf8')).toBe('18\n');
  });

  it('holds only the database Leasehold uses, without initdb\'s two templates, and still restarts', async () => {
    const first = await openStore({ dataDir: dir });
    await first.createProject({ name: 'kept' }, T0);
    await first.close();
    expect(await readdir(join(dir, 'pgdata', 'base'))).toHaveLength(1);
    const second = await openStore({ dataDir: dir });
    try {
      expect((await second.findProject('kept'))?.created_at).toEqual(T0);
    } finally {
      await second.close();
    }
  });

  it('takes less disk than the image holds: its write-ahead log\'s trailing zeros are a hole', async () => {
    const store = await openStore({ dataDir: dir });
    await store.close();
    const wal = (await readdir(join(dir, 'pgdata', 'pg_wal'))).find((f) => /^[0-9A-F]{24}$/.test(f))!;
    const walStat = await stat(join(dir, 'pgdata', 'pg_wal', wal));
    expect(walStat.size).toBe(16 * 2 ** 20);
    expect(walStat.blocks * 512).toBeLessThan(walStat.size);
  });
});
