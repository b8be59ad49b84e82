import { describe, expect, it } from 'vitest';
import { assignBestFit, type Candidate } from '../../src/domain/scheduling/best-fit.js';

const GiB = 2 ** 30;
const node = (id: string, memGiB: number, gpus = 0, diskGiB = 500, cpus = 16): Candidate => ({
  id,
  name: id,
  facts: { memory: memGiB * GiB, gpus, disk: diskGiB * GiB, cpus },
});

const small = node('small-16g', 16);
const huge = node('huge-1t', 1024);
const medium = node('medium-64g', 64);
const gpu1 = node('gpu-1', 64, 1);
const gpu2 = node('gpu-2', 128, 2);
const gpu8 = node('gpu-8', 512, 8);

describe('best fit', () => {
  it('a 16 GiB request takes the 16 GiB machine, never the 1 TiB one', () => {
    const result = assignBestFit([{ count: 1, candidates: [huge, medium, small] }]);
    expect(result).toEqual({ ok: true, nodes: [['small-16g']] });
  });

  it('takes GPU-less nodes before GPU nodes for a request that needs no GPU', () => {
    const result = assignBestFit([{ count: 2, candidates: [gpu1, huge, small] }]);
    expect(result).toEqual({ ok: true, nodes: [['small-16g', 'huge-1t']] });
  });

  it('is all or nothing: it reports how many each group could get when one is short', () => {
    const result = assignBestFit([
      { count: 2, candidates: [gpu1, gpu2] },
      { count: 2, candidates: [small] },
    ]);
    expect(result).toEqual({ ok: false, assigned: [2, 1] });
  });

  it('moves a group to its next candidate when another group needs its node', () => {
    const result = assignBestFit([
      { count: 2, candidates: [gpu1, gpu2, gpu8] },
      { count: 1, candidates: [gpu1] },
    ]);
    expect(result).toEqual({ ok: true, nodes: [['gpu-2', 'gpu-8'], ['gpu-1']] });
  });

  it('never gives one node to two groups', () => {
    const result = assignBestFit([
      { count: 1, candidates: [gpu1] },
      { count: 1, candidates: [gpu1] },
    ]);
    expect(result.ok).toBe(false);
  });

  it('is deterministic: ties break by name then id', () => {
    const a = node('a', 64);
    const b = node('b', 64);
    expect(assignBestFit([{ count: 1, candidates: [b, a] }])).toEqual({ ok: true, nodes: [['a']] });
    expect(assignBestFit([{ count: 1, candidates: [a, b] }])).toEqual({ ok: true, nodes: [['a']] });
  });

  it('finds an assignment among ten thousand candidates', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => node(`n${i}`, 16 + (i % 64), i % 4));
    const result = assignBestFit([
      { count: 3, candidates: many.filter((n) => (n.facts.gpus as number) >= 1) },
      { count: 1, candidates: many },
    ]);
    if (!result.ok) throw new Error('expected an assignment');
    const facts = (id: string) => many.find((n) => n.id === id)!.facts;
    // The smallest GPU nodes (1 GPU, 17 GiB) for the GPU group; the smallest GPU-less node (16 GiB) for the other.
    expect(result.nodes[0]!.map((id) => [facts(id).gpus, facts(id).memory])).toEqual(Array(3).fill([1, 17 * GiB]));
    expect(result.nodes[1]!.map((id) => [facts(id).gpus, facts(id).memory])).toEqual([[0, 16 * GiB]]);
  });
});
