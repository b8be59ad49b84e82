import { expect, test } from 'vitest';
import { ELLIPSIS, fitShortNames, nameRoom, shortNames } from '../src/timeline/short-names';

const labels = (names: string[], room: number) => names.map((n) => shortNames(names, room).get(n)!);

test('names that fit are kept whole', () => {
  expect(labels(['gpu-1', 'cpu-10'], 11)).toEqual(['gpu-1', 'cpu-10']);
});

test('long names of one rack keep their distinguishing end, not a shared beginning', () => {
  const names = ['compute-rack12-node-001', 'compute-rack12-node-002', 'compute-rack12-node-010'];
  const out = labels(names, 11);
  expect(out).toEqual([`${ELLIPSIS}2-node-001`, `${ELLIPSIS}2-node-002`, `${ELLIPSIS}2-node-010`]);
  for (const l of out) expect(l.length).toBeLessThanOrEqual(11);
});

test('names alike at the end keep as much of their beginning as tells them apart, all at the same length', () => {
  const names = ['physics-gpu-a100-01', 'biology-gpu-a100-01'];
  expect(labels(names, 11)).toEqual([`p${ELLIPSIS}u-a100-01`, `b${ELLIPSIS}u-a100-01`]);
});

test('names alike at both ends show the middle where they part', () => {
  const names = ['physics-lab-gpu-a100-01', 'physics-lab-cpu-a100-01'];
  const out = labels(names, 11);
  expect(out).toEqual([`${ELLIPSIS}gpu-a100-${ELLIPSIS}`, `${ELLIPSIS}cpu-a100-${ELLIPSIS}`]);
  expect(new Set(out).size).toBe(2);
});

test('a phone-width column of the demo-like inventory and uuids gives every row its own label within the room', () => {
  const names = [
    'gpu-a100-01', 'gpu-a100-02', 'gpu-h100-01', 'store-nvme-01', 'bigmem-01',
    'physics-lab-gpu-a100-01', 'physics-lab-cpu-a100-01', 'bio-gpu-a100-01',
    'b0b0b0b0-0000-4000-8000-000000000001', 'b0b0b0b0-0000-4000-8000-000000000002',
  ];
  const room = nameRoom(112);
  const map = shortNames(names, room);
  const out = names.map((n) => map.get(n)!);
  expect(new Set(out).size).toBe(names.length);
  for (const l of out) expect(l.length).toBeLessThanOrEqual(room);
});

test('the room follows the column width: about 11 characters at phone width, 19 on a wide screen', () => {
  expect(nameRoom(112)).toBe(11);
  expect(nameRoom(176)).toBe(19);
});

test('with a measure, the room shrinks until every label fits the column as drawn (wide letters take more)', () => {
  const names = ['physics-lab-gpu-a100-01', 'physics-lab-gpu-a100-02', 'mmmmmmmmmmmmmmmm-01'];
  // 7 px a character, 14 px for "m": the column's 112 px leave 91 px for text.
  const measure = (text: string) => [...text].reduce((w, c) => w + (c === 'm' ? 14 : 7), 0);
  const fitted = fitShortNames(names, 112, measure);
  for (const label of fitted.values()) expect(measure(label)).toBeLessThanOrEqual(91);
  expect(new Set(fitted.values()).size).toBe(3);
  expect(fitted.get('physics-lab-gpu-a100-01')).toMatch(/^….*a100-01$/);
  // Without a measure (jsdom), the estimate.
  expect(fitShortNames(names, 112, null)).toEqual(shortNames(names, nameRoom(112)));
});
