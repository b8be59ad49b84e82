import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/domain/errors.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { DEMO_BMC_PASSWORD, demoInventory } from '../../src/drivers/simulated/demo-inventory.js';
import { parseInventory } from '../../src/drivers/simulated/parse-inventory.js';
import { parseTimings } from '../../src/drivers/simulated/parse-timings.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import { DEFAULT_TIMINGS } from '../../src/drivers/simulated/simulated-types.js';

const GIB = 1024;

describe('demo inventory', () => {
  const nodes = demoInventory();
  const prop = (n: (typeof nodes)[number], key: string) => n.properties[key] as number;

  it('has about twenty nodes with unique, fixed uuids and unique names', () => {
    expect(nodes.length).toBeGreaterThanOrEqual(18);
    expect(nodes.length).toBeLessThanOrEqual(24);
    expect(new Set(nodes.map((n) => n.uuid)).size).toBe(nodes.length);
    expect(new Set(nodes.map((n) => n.name)).size).toBe(nodes.length);
    expect(demoInventory().map((n) => n.uuid)).toEqual(nodes.map((n) => n.uuid));
    expect(nodes.every((n) => /^[0-9a-f-]{36}$/.test(n.uuid ?? ''))).toBe(true);
  });

  it('passes the same validation as LEASEHOLD_SIMULATED_NODES', () => {
    expect(parseInventory(JSON.stringify(nodes))).toHaveLength(nodes.length);
  });

  it('offers GPU nodes of different sizes, big-disk storage nodes, small compute, aarch64 and a 1 TiB node', () => {
    const gpuNodes = nodes.filter((n) => prop(n, 'gpus') >= 1 && prop(n, 'memory_mb') >= 48 * GIB);
    expect(gpuNodes.length).toBeGreaterThanOrEqual(5);
    expect(new Set(gpuNodes.map((n) => prop(n, 'gpus')))).toEqual(new Set([1, 2, 4, 8]));
    expect(new Set(gpuNodes.map((n) => prop(n, 'memory_mb'))).size).toBeGreaterThanOrEqual(4);
    const storage = nodes.filter((n) => prop(n, 'local_gb') >= 1000 && prop(n, 'memory_mb') >= 16 * GIB && prop(n, 'memory_mb') <= 32 * GIB && !n.properties.gpus);
    expect(storage.length).toBeGreaterThanOrEqual(3);
    expect(nodes.some((n) => prop(n, 'memory_mb') >= 1024 * GIB)).toBe(true);
    expect(nodes.filter((n) => n.properties.cpu_arch === 'aarch64').length).toBeGreaterThanOrEqual(1);
    expect(nodes.some((n) => prop(n, 'memory_mb') <= 8 * GIB)).toBe(true);
    const traits = new Set(nodes.flatMap((n) => n.traits ?? []));
    for (const t of ['CUSTOM_GPU_A100', 'CUSTOM_NVME', 'CUSTOM_SLOW']) expect(traits).toContain(t);
    expect(new Set(nodes.map((n) => n.resource_class))).toEqual(new Set(['baremetal.gpu', 'baremetal.storage', 'baremetal.compute']));
    expect(nodes.some((n) => String(n.properties.capabilities ?? '').includes('boot_mode:uefi'))).toBe(true);
  });

  it('is owned by the three demo projects with a few unowned nodes', () => {
    const owners = new Set(nodes.map((n) => n.owner ?? null));
    expect(owners).toEqual(new Set(['physics-lab', 'bio-lab', 'cs-dept', null]));
    expect(nodes.filter((n) => !n.owner).length).toBeGreaterThanOrEqual(2);
  });

  it('carries BMC credentials that never leave the driver', async () => {
    expect(JSON.stringify(nodes)).toContain(DEMO_BMC_PASSWORD);
    const driver = new SimulatedDriver({ nodes, clock: new ManualClock() });
    const listed = await driver.listNodes();
    expect(listed).toHaveLength(nodes.length);
    const everything = [listed, ...(await Promise.all(listed.map((n) => driver.getNode(n.uuid))))];
    expect(JSON.stringify(everything)).not.toContain(DEMO_BMC_PASSWORD);
    expect(JSON.stringify(everything)).not.toContain('ipmi_');
  });
});

describe('LEASEHOLD_SIMULATED_NODES parsing', () => {
  const ok = { name: 'n-1', properties: { memory_mb: 1024, cpus: 2, local_gb: 20, cpu_arch: 'x86_64' } };
  const parse = (value: unknown) => parseInventory(JSON.stringify(value));
  const message = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidRequestError);
      return (err as Error).message;
    }
    throw new Error('expected an error');
  };

  it('accepts nodes in Ironic\'s JSON shape, ignoring Ironic fields it does not use', () => {
    const [node] = parse([{ ...ok, driver: 'ipmi', instance_info: {}, owner: 'bio-lab', traits: ['CUSTOM_X'] }]);
    expect(node).toMatchObject({ name: 'n-1', owner: 'bio-lab', provision_state: 'available', power_state: 'power off', traits: ['CUSTOM_X'] });
    expect(node?.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parse([ok])[0]?.uuid).toBe(node?.uuid); // stable across starts
  });

  it('names the index and field of a bad value', () => {
    const nodes = [ok, { ...ok, name: 'n-2' }, { ...ok, name: 'n-3', properties: { ...ok.properties, memory_mb: '64G' } }];
    expect(message(() => parse(nodes))).toBe('LEASEHOLD_SIMULATED_NODES[2].properties.memory_mb: expected a non-negative number');
  });

  it.each([
    ['not json', 'LEASEHOLD_SIMULATED_NODES: not valid JSON'],
    ['{"name":"x"}', 'LEASEHOLD_SIMULATED_NODES: expected a JSON array of nodes'],
    [JSON.stringify([{ properties: {} }]), 'LEASEHOLD_SIMULATED_NODES[0].name: expected a name'],
    [JSON.stringify([{ ...ok, uuid: 'abc' }]), 'LEASEHOLD_SIMULATED_NODES[0].uuid: expected a UUID'],
    [JSON.stringify([{ ...ok, propertes: {} }]), 'LEASEHOLD_SIMULATED_NODES[0].propertes: unknown field'],
    [JSON.stringify([{ name: 'x' }]), 'LEASEHOLD_SIMULATED_NODES[0].properties: expected an object'],
    [JSON.stringify([{ ...ok, properties: { ...ok.properties, gpus: 1.5 } }]), '[0].properties.gpus: expected a non-negative integer'],
    [JSON.stringify([{ ...ok, properties: { ...ok.properties, capabilities: 'uefi' } }]), '[0].properties.capabilities: expected "key:value'],
    [JSON.stringify([{ ...ok, traits: ['gpu'] }]), 'LEASEHOLD_SIMULATED_NODES[0].traits[0]: expected a trait name'],
    [JSON.stringify([{ ...ok, provision_state: 'cleaning' }]), 'LEASEHOLD_SIMULATED_NODES[0].provision_state: expected one of'],
    [JSON.stringify([{ ...ok, power_state: 'on' }]), 'LEASEHOLD_SIMULATED_NODES[0].power_state'],
    [JSON.stringify([{ ...ok, owner: 5 }]), 'LEASEHOLD_SIMULATED_NODES[0].owner: expected a string or null'],
    [JSON.stringify([ok, ok]), 'LEASEHOLD_SIMULATED_NODES[1].uuid: '],
    [JSON.stringify([{ ...ok, uuid: '0b6a5c3e-1111-4aaa-8aaa-000000000001' }, { ...ok, uuid: '0b6a5c3e-1111-4aaa-8aaa-000000000002' }]), 'LEASEHOLD_SIMULATED_NODES[1].name: "n-1" is already used by LEASEHOLD_SIMULATED_NODES[0]'],
  ])('rejects %s', (json, expected) => {
    expect(message(() => parseInventory(json))).toContain(expected);
  });
});

describe('LEASEHOLD_SIMULATED_TIMINGS parsing', () => {
  it('reads durations in milliseconds', () => {
    expect(parseTimings('{"powerMs": 500, "cleanMs": 0}')).toEqual({ powerMs: 500, cleanMs: 0 });
  });

  it('a speed factor divides the defaults not given explicitly', () => {
    const timings = parseTimings('{"speed": 10, "powerMs": 50}');
    expect(timings.powerMs).toBe(50);
    expect(timings.cleanMs).toBe(DEFAULT_TIMINGS.cleanMs / 10);
  });

  it.each([
    ['[1]', 'LEASEHOLD_SIMULATED_TIMINGS: expected a JSON object'],
    ['{"powerMs": -1}', 'LEASEHOLD_SIMULATED_TIMINGS.powerMs: expected a non-negative number'],
    ['{"speed": 0}', 'LEASEHOLD_SIMULATED_TIMINGS.speed: expected a positive number'],
    ['{"power": 5}', 'LEASEHOLD_SIMULATED_TIMINGS.power: unknown timing'],
    ['{', 'not valid JSON'],
  ])('rejects %s', (json, expected) => {
    expect(() => parseTimings(json)).toThrow(expected);
  });
});
