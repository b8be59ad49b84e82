import type { SimulatedNodeSpec } from '../src/drivers/simulated/simulated-driver.js';
import { prng } from './stats.js';

/** The projects that own the benchmark's nodes (every node is owned, and offered by its owner). */
export const OWNER_PROJECTS = ['physics-lab', 'bio-lab', 'cs-dept', 'hpc-center'] as const;
/** Trait of the small set of nodes the race (section 2) is fought over; seeded leases leave them alone. */
export const RACE_TRAIT = 'CUSTOM_BENCH_RACE';

const pick = <T>(r: () => number, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;

const GPU_MODELS = [
  { model: 'T4-16GB', trait: 'CUSTOM_GPU_T4', memGiB: [48, 64, 96], gpus: [1, 2] },
  { model: 'A100-80GB', trait: 'CUSTOM_GPU_A100', memGiB: [128, 256, 512], gpus: [2, 4, 8] },
  { model: 'H100-80GB', trait: 'CUSTOM_GPU_H100', memGiB: [512, 1024], gpus: [4, 8] },
  { model: 'L40S-48GB', trait: 'CUSTOM_GPU_L40S', memGiB: [192, 256], gpus: [2, 4] },
  { model: 'V100-16GB', trait: 'CUSTOM_GPU_V100', memGiB: [48, 96], gpus: [1, 4] },
] as const;

function uuid(kind: number, index: number): string {
  return `b3c4${kind.toString(16).padStart(4, '0')}-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;
}

/**
 * A varied data centre of `count` nodes (deterministic): ~30 % GPU nodes of very different sizes (so best fit
 * matters), ~20 % storage nodes with large disks and little memory, ~50 % compute nodes (10 % of them aarch64),
 * a few in maintenance, spread over the owner projects; plus `raceNodes` small identical nodes for the race.
 */
export function benchInventory(count: number, raceNodes = 0): SimulatedNodeSpec[] {
  const r = prng(20300101);
  const nodes: SimulatedNodeSpec[] = [];
  for (let i = 0; i < count - raceNodes; i++) {
    const owner = OWNER_PROJECTS[i % OWNER_PROJECTS.length]!;
    const rack = `R${String(Math.floor(i / 40)).padStart(3, '0')}`;
    const bmc = { ipmi_address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, ipmi_username: 'admin', ipmi_password: 'bench-bmc-secret' };
    const uefi = r() < 0.8 ? 'boot_mode:uefi,cpu_vt:true' : 'boot_mode:bios,cpu_vt:true';
    const kind = r();
    let spec: SimulatedNodeSpec;
    if (kind < 0.3) {
      const gpu = pick(r, GPU_MODELS);
      const memGiB = pick(r, gpu.memGiB);
      spec = {
        uuid: uuid(1, i),
        name: `gpu-${String(i).padStart(5, '0')}`,
        owner,
        resource_class: 'baremetal.gpu',
        properties: {
          memory_mb: memGiB * 1024,
          cpus: Math.min(192, Math.max(16, memGiB / 4)),
          local_gb: pick(r, [480, 960, 1920, 3840]),
          cpu_arch: 'x86_64',
          gpus: pick(r, gpu.gpus),
          gpu_model: gpu.model,
          capabilities: uefi,
        },
        traits: r() < 0.5 ? [gpu.trait, 'CUSTOM_NVME'] : [gpu.trait],
        extra: { rack, datacenter: 'dc1' },
        driver_info: bmc,
      };
    } else if (kind < 0.5) {
      spec = {
        uuid: uuid(2, i),
        name: `store-${String(i).padStart(5, '0')}`,
        owner,
        resource_class: 'baremetal.storage',
        properties: { memory_mb: pick(r, [16, 32, 64]) * 1024, cpus: pick(r, [8, 16]), local_gb: pick(r, [4000, 8000, 12000, 16000]), cpu_arch: 'x86_64', capabilities: uefi },
        traits: r() < 0.3 ? ['CUSTOM_HDD', 'CUSTOM_SLOW'] : ['CUSTOM_HDD'],
        extra: { rack, datacenter: 'dc1' },
        driver_info: bmc,
      };
    } else {
      const memGiB = pick(r, [8, 16, 16, 32, 32, 64, 64, 128, 256, 512, 1024]);
      spec = {
        uuid: uuid(3, i),
        name: `cpu-${String(i).padStart(5, '0')}`,
        owner,
        resource_class: 'baremetal.compute',
        properties: {
          memory_mb: memGiB * 1024,
          cpus: Math.min(128, Math.max(4, memGiB / 4)),
          local_gb: pick(r, [240, 480, 960, 1920]),
          cpu_arch: r() < 0.1 ? 'aarch64' : 'x86_64',
          capabilities: uefi,
        },
        traits: r() < 0.2 ? ['CUSTOM_NVME'] : [],
        extra: { rack, datacenter: 'dc1' },
        driver_info: bmc,
      };
    }
    if (r() < 0.005) spec = { ...spec, maintenance: true, maintenance_reason: 'DIMM reports ECC errors' };
    nodes.push(spec);
  }
  for (let i = 0; i < raceNodes; i++) nodes.push(raceNode(i, OWNER_PROJECTS[0]));
  return nodes;
}

/** Small identical compute nodes: neither group of the seed request matches them. */
export function raceNode(i: number, owner: string): SimulatedNodeSpec {
  return {
    uuid: uuid(4, i),
    name: `race-${String(i).padStart(3, '0')}`,
    owner,
    resource_class: 'baremetal.compute',
    properties: { memory_mb: 8192, cpus: 4, local_gb: 100, cpu_arch: 'x86_64' },
    traits: [RACE_TRAIT],
    driver_info: { ipmi_address: `10.99.0.${i}`, ipmi_username: 'admin', ipmi_password: 'bench-bmc-secret' },
  };
}

/** Plain compute nodes for the lease-end section: one per lease. */
export function endNodes(count: number, owner: string): SimulatedNodeSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    uuid: uuid(5, i),
    name: `end-${String(i).padStart(5, '0')}`,
    owner,
    resource_class: 'baremetal.compute',
    properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64' },
    driver_info: { ipmi_address: `10.98.${i >> 8}.${i & 255}`, ipmi_username: 'admin', ipmi_password: 'bench-bmc-secret' },
  }));
}
