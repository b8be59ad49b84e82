import { afterEach, describe, expect, it, vi } from 'vitest';

// What V8 was told, in order; and PGlite starts the test finishes by hand.
const flags: string[] = [];
const pending: Array<{ resolve: (v: unknown) => void; reject: (e: Error) => void; dataDir: string; options: unknown }> = [];

vi.mock('node:v8', () => ({ setFlagsFromString: (flag: string) => flags.push(flag) }));
vi.mock('@electric-sql/pglite', () => ({
  PGlite: {
    create: (dataDir: string, options: unknown) =>
      new Promise((resolve, reject) => {
        pending.push({ resolve, reject, dataDir, options });
      }),
  },
}));

const { startPGlite } = await import('../../src/store/start-pglite.js');

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('starting PGlite on the baseline WebAssembly compiler', () => {
  afterEach(() => {
    flags.length = 0;
    pending.length = 0;
  });

  it('keeps WebAssembly on the baseline compiler while PGlite starts, and lets it tier up once it has started', async () => {
    const started = startPGlite('memory://', { startParams: ['-c', 'shared_buffers=16MB'] });
    await settle();
    expect(flags).toEqual(['--liftoff-only']);
    expect(pending[0]!.dataDir).toBe('memory://');
    expect(pending[0]!.options).toMatchObject({ startParams: ['-c', 'shared_buffers=16MB'], extensions: { btree_gist: expect.anything() } });
    pending[0]!.resolve('db');
    expect(await started).toBe('db');
    expect(flags).toEqual(['--liftoff-only', '--no-liftoff-only']);
  });

  it('two starts at once: the optimising compiler comes back only when the last has started', async () => {
    const a = startPGlite('memory://');
    const b = startPGlite('memory://');
    await settle();
    pending[0]!.resolve('a');
    await a;
    expect(flags).toEqual(['--liftoff-only']);
    pending[1]!.resolve('b');
    await b;
    expect(flags).toEqual(['--liftoff-only', '--no-liftoff-only']);
  });

  it('a start that fails still lets the process tier up again', async () => {
    const failed = startPGlite('/nowhere');
    await settle();
    pending[0]!.reject(new Error('could not open'));
    await expect(failed).rejects.toThrow('could not open');
    expect(flags).toEqual(['--liftoff-only', '--no-liftoff-only']);
  });
});
