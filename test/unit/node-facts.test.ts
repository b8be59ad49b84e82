import { describe, expect, it } from 'vitest';
import { deriveFacts, parseCapabilities } from '../../src/domain/node-facts.js';

describe('node facts', () => {
  it('turns Ironic sizes into bytes so "memory >= 48GiB" compares like with like', () => {
    const facts = deriveFacts({ memory_mb: 49152, local_gb: 1024, cpus: 32, cpu_arch: 'x86_64' }, 'baremetal.gpu');
    expect(facts.memory).toBe(48 * 2 ** 30);
    expect(facts.disk).toBe(1024 * 2 ** 30);
    expect(facts.cpus).toBe(32);
    expect(facts.cpu_arch).toBe('x86_64');
    expect(facts.resource_class).toBe('baremetal.gpu');
  });

  it('counts a node that says nothing about GPUs as having none', () => {
    expect(deriveFacts({ memory_mb: 1024 }, null).gpus).toBe(0);
    expect(deriveFacts({ memory_mb: 1024, gpus: 4 }, null).gpus).toBe(4);
  });

  it('reads numbers that Ironic stores as strings', () => {
    const facts = deriveFacts({ memory_mb: '65536', cpus: '16', gpus: '2' }, null);
    expect(facts).toMatchObject({ memory: 64 * 2 ** 30, cpus: 16, gpus: 2 });
  });

  it('keeps every other property and each capability under its own name', () => {
    const facts = deriveFacts(
      { cpu_model: 'EPYC 7763', numa_nodes: 2, capabilities: 'boot_mode:uefi,cpu_vt:true,cpu_model:ignored' },
      null,
    );
    expect(facts).toMatchObject({ cpu_model: 'EPYC 7763', numa_nodes: 2, boot_mode: 'uefi', cpu_vt: true });
  });

  it('parses capabilities given as "k:v,k:v" or as an object, skipping junk', () => {
    expect(parseCapabilities('a:1, b:x ,junk,:empty')).toEqual([
      ['a', 1],
      ['b', 'x'],
    ]);
    expect(parseCapabilities({ boot_mode: 'bios' })).toEqual([['boot_mode', 'bios']]);
    expect(parseCapabilities(undefined)).toEqual([]);
  });

  it('ignores sizes that are not numbers rather than inventing them', () => {
    const facts = deriveFacts({ memory_mb: 'lots', local_gb: -5 }, null);
    expect(facts.memory).toBeUndefined();
    expect(facts.disk).toBeUndefined();
  });
});
