import { describe, expect, it } from 'vitest';
import { checkExpression, knownFacts } from '../../src/domain/expression/check.js';
import { evaluate, type Subject } from '../../src/domain/expression/evaluate.js';
import { parseExpression } from '../../src/domain/expression/parser.js';
import { InvalidRequestError } from '../../src/domain/errors.js';

const GiB = 2 ** 30;
const gpuNode: Subject = {
  facts: { memory: 64 * GiB, disk: 480 * GiB, cpus: 32, gpus: 1, cpu_arch: 'x86_64', boot_mode: 'uefi' },
  traits: ['CUSTOM_GPU_A100'],
};
const storageNode: Subject = {
  facts: { memory: 16 * GiB, disk: 4000 * GiB, cpus: 8, gpus: 0, cpu_arch: 'x86_64' },
  traits: ['CUSTOM_NVME', 'CUSTOM_SLOW'],
};
const bigNode: Subject = {
  facts: { memory: 1024 * GiB, disk: 1920 * GiB, cpus: 128, gpus: 8, cpu_arch: 'aarch64' },
  traits: [],
};
const known = knownFacts([gpuNode.facts, storageNode.facts, bigNode.facts]);

function matches(source: string): string[] {
  const expr = parseExpression(source);
  checkExpression(source, expr, known);
  return Object.entries({ gpuNode, storageNode, bigNode })
    .filter(([, s]) => evaluate(expr, s))
    .map(([name]) => name);
}

function error(source: string): InvalidRequestError {
  try {
    checkExpression(source, parseExpression(source), known);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error(`expected ${source} to be refused`);
}

describe('requirement expressions', () => {
  it('compare sizes with units: 48GiB of memory and a GPU picks the GPU machines', () => {
    expect(matches('memory >= 48GiB and gpus >= 1')).toEqual(['gpuNode', 'bigNode']);
  });

  it('read decimal units as disks are sold: 1TB is 10^12 bytes', () => {
    expect(matches('memory >= 16GiB and disk >= 1TB')).toEqual(['storageNode', 'bigNode']);
    expect(matches('disk >= 3TB')).toEqual(['storageNode']);
    expect(matches('disk >= 2TB')).toEqual(['storageNode', 'bigNode']); // 1920 GiB is 2.06 TB
  });

  it('compare strings case-insensitively with == and !=', () => {
    expect(matches('cpu_arch == "x86_64"')).toEqual(['gpuNode', 'storageNode']);
    expect(matches("cpu_arch != 'X86_64'")).toEqual(['bigNode']);
    expect(matches('boot_mode = "uefi"')).toEqual(['gpuNode']);
  });

  it('test trait membership, with not, or and parentheses', () => {
    expect(matches('has CUSTOM_NVME or (cpus >= 64 and not has CUSTOM_SLOW)')).toEqual(['storageNode', 'bigNode']);
    expect(matches('not has CUSTOM_SLOW')).toEqual(['gpuNode', 'bigNode']);
    expect(matches('NOT (gpus > 0) AND memory < 32GiB')).toEqual(['storageNode']);
  });

  it('bind "and" tighter than "or"', () => {
    expect(matches('gpus >= 8 or gpus >= 1 and cpus < 16')).toEqual(['bigNode']);
  });

  it('fail a comparison on a node that lacks the fact', () => {
    expect(matches('boot_mode == "uefi"')).toEqual(['gpuNode']);
    expect(matches('not boot_mode == "uefi"')).toEqual(['storageNode', 'bigNode']);
  });

  it.each([
    ['memory >= ', 11, 'expected a value'],
    ['memory >= 48GiB and', 20, 'expected a fact name'],
    ['(gpus >= 1', 11, 'expected ")"'],
    ['gpus >= 1)', 10, 'expected "and", "or" or the end'],
    ['memory 48GiB', 8, 'expected a comparison'],
    ['memory >= 48 GiBs', 14, 'expected "and", "or"'],
    ['memory >= 48XB', 13, 'unknown unit "XB"'],
    ['cpu_arch == "x86', 13, 'unterminated string'],
    ['gpus >= 1 && cpus > 2', 11, 'unexpected character'],
    ['', 1, 'expected an expression'],
  ])('refuse %j naming position %d', (source, pos, message) => {
    const err = error(source);
    expect(err.details.position).toBe(pos);
    expect(err.message).toContain(`position ${pos}`);
    expect(err.message).toContain(message);
  });

  it('refuse an unknown fact, listing the known ones', () => {
    const err = error('ram >= 48GiB');
    expect(err.message).toContain('unknown fact "ram"');
    expect(err.details.known_facts).toEqual(expect.arrayContaining(['memory', 'disk', 'cpus', 'gpus', 'cpu_arch', 'boot_mode']));
  });

  it('read a size written with a space before its unit, as people write it: 48 GiB', () => {
    expect(matches('memory >= 48 GiB and gpus >= 1')).toEqual(['gpuNode', 'bigNode']);
    expect(matches('disk >= 3 tb')).toEqual(['storageNode']);
    // A word after a number that is not a unit is the next token, not a unit.
    expect(matches('gpus >= 1 and cpus >= 64')).toEqual(['bigNode']);
  });

  it('suggest the fact meant when one is mistyped (gpu → gpus), and nothing when none is close', () => {
    expect(error('gpu >= 1').message).toContain('did you mean "gpus"?');
    expect(error('gpu >= 1').details.did_you_mean).toBe('gpus');
    expect(error('memroy >= 48GiB').details.did_you_mean).toBe('memory');
    expect(error('cpu_arc == "x86_64"').details.did_you_mean).toBe('cpu_arch');
    expect(error('ram >= 48GiB').details.did_you_mean).toBeUndefined();
    expect(error('ram >= 48GiB').message).not.toContain('did you mean');
  });

  it('refuse a size without a unit, and a type mismatch', () => {
    expect(error('memory >= 48').message).toContain('give a unit');
    expect(error('cpus == "many"').message).toContain('"cpus" is a number');
    expect(error('cpu_arch > "a"').message).toContain('only be compared with == or !=');
  });
});
