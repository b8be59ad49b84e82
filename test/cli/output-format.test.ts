import { describe, expect, it } from 'vitest';
import { formatDisk, formatMemory } from '../../src/cli/format.js';
import { renderFields, renderTable } from '../../src/cli/output.js';

describe('tables', () => {
  it('align columns two spaces apart without trailing blanks, and show absent values as a dash', () => {
    expect(renderTable(['A', 'LONG HEADER', 'C'], [['xyz', null, ''], ['1', 'two', 'three']])).toBe(
      'A    LONG HEADER  C\nxyz  -            -\n1    two          three\n',
    );
  });

  it('keep one line per row when a value has newlines', () => {
    expect(renderTable(['A', 'B'], [['x', 'line one\nline two']])).toBe('A  B\nx  line one line two\n');
  });

  it('show an object as FIELD/VALUE rows', () => {
    expect(renderFields([['id', 'abc'], ['description', null], ['count', 0], ['ok', false]])).toBe(
      'FIELD        VALUE\nid           abc\ndescription  -\ncount        0\nok           false\n',
    );
  });
});

describe('sizes', () => {
  it('memory in GiB, floored to one decimal so it never overstates', () => {
    expect(formatMemory(64 * 2 ** 30)).toBe('64 GiB');
    expect(formatMemory(47.99 * 2 ** 30)).toBe('47.9 GiB');
    expect(formatMemory(512 * 2 ** 20)).toBe('512 MiB');
    expect(formatMemory(undefined)).toBe('-');
  });

  it('disk in decimal GB/TB with three significant digits, floored', () => {
    expect(formatDisk(480 * 2 ** 30)).toBe('515 GB');
    expect(formatDisk(1e12)).toBe('1 TB');
    expect(formatDisk(0.9999e12)).toBe('999 GB');
    expect(formatDisk(4000 * 2 ** 30)).toBe('4.29 TB');
    expect(formatDisk(12.5e12)).toBe('12.5 TB');
    expect(formatDisk(0)).toBe('0 B');
    expect(formatDisk('big')).toBe('-');
  });
});
