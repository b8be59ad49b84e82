import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The rooms of src/ and the floors they stand on (docs/architecture.md draws them). A file may import from its own
 * room and from rooms on lower floors, never from a higher floor or from another room on its own floor; and no
 * chain of imports, type-only ones included, may lead back to where it started. Read from the code's own imports
 * (TypeScript's preProcessFile), so a new arrow the wrong way fails `npm test` the day it is written.
 */
const FLOORS: Readonly<Record<string, number>> = {
  domain: 0,
  'logger.ts': 1,
  'config.ts': 1,
  store: 2,
  drivers: 2,
  keystone: 2,
  engine: 3,
  leasing: 3,
  identity: 3,
  networking: 4,
  access: 5,
  gateway: 6,
  console: 6,
  api: 7,
  server: 8,
  cli: 9,
};

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

interface Arrow {
  readonly from: string;
  readonly to: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every relative import of every file under src/, as paths relative to src/ (`api/app.ts`). */
function arrows(): Arrow[] {
  return sourceFiles(SRC).flatMap((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    return importedFiles
      .filter((i) => i.fileName.startsWith('.'))
      .map((i) => ({
        from: relative(SRC, file),
        to: relative(SRC, resolve(dirname(file), i.fileName).replace(/\.js$/, '.ts')),
      }));
  });
}

const roomOf = (path: string): string => path.split('/')[0]!;

function cycles(all: readonly Arrow[]): string[][] {
  const next = new Map<string, string[]>();
  for (const a of all) next.set(a.from, [...(next.get(a.from) ?? []), a.to]);
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const to of next.get(node) ?? []) {
      if (state.get(to) === 'open') found.push([...stack.slice(stack.indexOf(to)), to]);
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...next.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

describe('the house: imports run down the floors, never up or sideways, and never in a circle', () => {
  const all = arrows();

  it('every room of src/ has a floor', () => {
    const rooms = new Set(all.flatMap((a) => [roomOf(a.from), roomOf(a.to)]));
    expect([...rooms].filter((r) => FLOORS[r] === undefined)).toEqual([]);
  });

  it('no file imports from a higher floor or from another room on its own floor', () => {
    const wrong = all
      .filter((a) => roomOf(a.from) !== roomOf(a.to) && FLOORS[roomOf(a.to)]! >= FLOORS[roomOf(a.from)]!)
      .map((a) => `${a.from} -> ${a.to}`);
    expect(wrong).toEqual([]);
  });

  it('no chain of imports leads back to where it started', () => {
    expect(cycles(all).map((c) => c.join(' -> '))).toEqual([]);
  });
});
