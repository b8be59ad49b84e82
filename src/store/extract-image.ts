import { mkdir, open, readFile } from 'node:fs/promises';
import { join, normalize, sep } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const BLOCK = 512;
/** Files written at once: enough to keep libuv's 4 threads busy with file creation (the slow part here). */
const CONCURRENCY = 16;

interface Entry {
  readonly path: string;
  readonly type: 'file' | 'dir';
  readonly data: Uint8Array;
}

/**
 * Unpacks a data-directory image (the gzipped tarball PGlite's `dumpDataDir` writes) into `into`, with Node's
 * asynchronous file calls, before PGlite opens it. PGlite's own `loadDataDir` writes its 1,109 files one by one,
 * synchronously, through its Emscripten file system on the main thread: 1.8 s of a 3.3 s fresh open here (load ≈ 5),
 * during which nothing else could run. Here the files are written from libuv's threads, while the server's modules
 * load and PGlite's WebAssembly compiles. The bytes are the image's: a file's trailing zeros (most of the 16 MiB
 * write-ahead log segment after the image's checkpoint) become a hole made by truncating to the file's size, which
 * reads back as the same zeros.
 */
export async function extractImage(tarGz: Uint8Array, into: string): Promise<void> {
  const entries = parseTar(await promisify(gunzip)(tarGz));
  await mkdir(into, { recursive: true, mode: 0o700 });
  // Directories first (in tar order, parents before children), then the files in parallel.
  for (const entry of entries) {
    if (entry.type === 'dir') await mkdir(join(into, entry.path), { recursive: true, mode: 0o700 });
  }
  const files = entries.filter((e) => e.type === 'file');
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      await writeSparse(join(into, file.path), file.data);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
}

/** The image's data directory as tar entries (ustar: 512-byte headers, names with an optional prefix). */
function parseTar(tar: Uint8Array): Entry[] {
  const entries: Entry[] = [];
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break; // end of archive
    const name = text(header, 0, 100);
    const prefix = text(header, 345, 155);
    const size = parseInt(text(header, 124, 12).trim() || '0', 8);
    const typeflag = String.fromCharCode(header[156]!);
    at += BLOCK;
    const data = tar.subarray(at, at + size);
    at += Math.ceil(size / BLOCK) * BLOCK;
    if (!Number.isFinite(size) || data.length !== size) throw new Error('data-directory image: truncated tar entry');
    const path = safePath(prefix ? `${prefix}/${name}` : name);
    if (path === '') continue;
    if (typeflag === '5') entries.push({ path, type: 'dir', data });
    else if (typeflag === '0' || typeflag === '\0') entries.push({ path, type: 'file', data });
    else throw new Error(`data-directory image: unexpected tar entry type ${JSON.stringify(typeflag)} for ${path}`);
  }
  return entries;
}

function text(block: Uint8Array, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const end = field.indexOf(0);
  return Buffer.from(end < 0 ? field : field.subarray(0, end)).toString('utf8');
}

/** The entry's path relative to the data directory; one that would leave it is refused. */
function safePath(name: string): string {
  const path = normalize(name.replace(/^\/+/, '')).replace(/\/+$/, '');
  if (path === '.') return '';
  if (path.startsWith('..') || path.split(sep).includes('..')) throw new Error(`data-directory image: path outside the data directory: ${name}`);
  return path;
}

/** Writes `data` up to its last non-zero byte and sets the file's full size: the zeros after it are a hole. */
async function writeSparse(path: string, data: Uint8Array): Promise<void> {
  let end = data.length;
  while (end > 0 && data[end - 1] === 0) end--;
  const handle = await open(path, 'w', 0o600);
  try {
    if (end > 0) await handle.write(data, 0, end, 0);
    if (end < data.length) await handle.truncate(data.length);
  } finally {
    await handle.close();
  }
}

/** Reads the image file and unpacks it (see extractImage). */
export async function extractImageFile(image: URL | string, into: string): Promise<void> {
  await extractImage(await readFile(image), into);
}
