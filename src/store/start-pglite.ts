import { setFlagsFromString } from 'node:v8';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { btree_gist } from '@electric-sql/pglite/contrib/btree_gist';

/** The V8 flag that keeps WebAssembly on the baseline compiler (Liftoff): no optimising tier-up. */
const BASELINE_ONLY = '--liftoff-only';

/** PGlite starts under way in this process: the flag is set while there is at least one. */
let starting = 0;

/**
 * Starts PGlite (with the btree_gist extension the exclusion constraints need) while V8 compiles WebAssembly with
 * its baseline compiler only, then lets hot code tier up again.
 *
 * Why (issue 15, measured on the 2-core machine, Node 20): PostgreSQL's start inside WebAssembly runs enough of its
 * code to make V8 optimise hundreds of functions once, which the server never runs again: their optimised code and
 * the compiler's memory left in malloc's arenas held ≈ 105 MiB. The idle demo (`leasehold serve` on a fresh data
 * directory, `VmRSS` 5 s after the first 200 from /healthz) held 290–296 MiB with it, 182–185 MiB without.
 * Queries still tier up once hot after the start: sections 1–3 of the bench on PGlite (quotes and creates at
 * 10,000 nodes, the race, 1,000 ends) gave the same figures with and without this, in turns. Kept off for the
 * whole process (`--liftoff-only` everywhere), the same sections were 15–45 % slower.
 *
 * Node keeps V8's flags writable after start (it builds V8 without freezing them) for `v8.setFlagsFromString`.
 * A process started with a Liftoff flag of its own keeps it as given.
 */
export async function startPGlite(dataDir: string, options: Omit<PGliteOptions, 'extensions'> = {}): Promise<PGlite> {
  const flip = !process.execArgv.some((arg) => arg.includes('liftoff'));
  if (flip && starting++ === 0) setFlagsFromString(BASELINE_ONLY);
  try {
    return await PGlite.create(dataDir, { ...options, extensions: { btree_gist } });
  } finally {
    if (flip && --starting === 0) setFlagsFromString('--no-liftoff-only');
  }
}
