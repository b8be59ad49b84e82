import { describe, expect, it } from 'vitest';
import { idsMentioned, messageWithNames } from '../../src/domain/event-text.js';
import { idPrefixPattern, isIdPrefix } from '../../src/domain/ids.js';

const NODE = '0b6a5c3e-1111-4222-8333-944455556666';
const PROJECT = '7d0c5d1e-0000-4000-8000-000000000001';
const OTHER = '9f9f9f9f-0000-4000-8000-000000000002';

describe('id prefixes', () => {
  it('takes hex digits and dashes, as tables print ids, and nothing a LIKE pattern would read as a wildcard', () => {
    expect(isIdPrefix('ff102e2b')).toBe(true);
    expect(isIdPrefix('FF102E2B-0')).toBe(true);
    expect(isIdPrefix(NODE)).toBe(true);
    for (const bad of ['', 'gpu-01', 'ff%', 'ff_1', 'ff 10', 'a'.repeat(65)]) expect(isIdPrefix(bad)).toBe(false);
  });

  it('makes a lower-case LIKE pattern, and refuses anything else', () => {
    expect(idPrefixPattern('FF102E2B')).toBe('ff102e2b%');
    expect(() => idPrefixPattern('50%')).toThrow(RangeError);
  });
});

describe('event messages with names', () => {
  it('collects the node, the project and every uuid the message mentions, once each', () => {
    const ids = idsMentioned([
      { node_id: NODE, project_id: PROJECT, message: `node ${NODE} handed to project ${PROJECT}` },
      { node_id: null, project_id: PROJECT, message: `node ${NODE.toUpperCase()} sub-leased to project ${OTHER}` },
    ]);
    expect(ids.sort()).toEqual([NODE, PROJECT, OTHER].sort());
  });

  it('replaces each id it has a name for, keeps the others, and leaves a message without ids as it is', () => {
    const names = new Map<string, string | null>([
      [NODE, 'gpu-a100-01'],
      [PROJECT, 'physics-lab'],
      [OTHER, null],
    ]);
    expect(messageWithNames(`node ${NODE} handed to project ${PROJECT}`, names)).toBe('node gpu-a100-01 handed to project physics-lab');
    expect(messageWithNames(`sub-leased to project ${OTHER}`, names)).toBe(`sub-leased to project ${OTHER}`);
    expect(messageWithNames(`lessee set again to project ${PROJECT.toUpperCase()}`, names)).toBe('lessee set again to project physics-lab');
    expect(messageWithNames('lease is active', names)).toBe('lease is active');
    expect(messageWithNames(`node ${NODE}`, new Map())).toBe(`node ${NODE}`);
  });

  it('replaces a Keystone project id (no dashes) it is given, and a name with $ in it literally', () => {
    const keystone = 'c4e8b1d2a3f405162738495a6b7c8d9e';
    expect(messageWithNames(`handed to project ${keystone}`, new Map([[keystone, 'geo$1']]))).toBe('handed to project geo$1');
  });
});
