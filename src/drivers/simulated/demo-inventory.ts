import type { SimulatedNodeSpec } from './simulated-types.js';

/** The fake BMC password on every demo node: tests search every output for it to prove secrets never leak. */
export const DEMO_BMC_PASSWORD = 'demo-bmc-Pa55w0rd!';

const GIB = 1024;
const UEFI = 'boot_mode:uefi,cpu_vt:true';

interface Row {
  readonly uuid: string;
  readonly name: string;
  readonly owner: string | null;
  readonly rc: 'baremetal.gpu' | 'baremetal.storage' | 'baremetal.compute';
  readonly memGiB: number;
  readonly cpus: number;
  readonly diskGb: number;
  readonly arch?: 'x86_64' | 'aarch64';
  readonly gpus?: number;
  readonly gpuModel?: string;
  readonly traits?: readonly string[];
  readonly caps?: string;
  readonly rack: string;
  readonly maintenance?: string;
}

/**
 * A small data centre for the demo: GPU nodes of very different sizes (so best fit visibly matters: a 1-GPU
 * request must not take the 8-GPU machine), storage nodes with large disks and little memory, small compute
 * nodes, two aarch64 servers, a 1 TiB memory node, owned by three projects with a few unowned, one node in
 * maintenance. UUIDs are fixed so leases and history stay attached across restarts.
 */
const ROWS: readonly Row[] = [
  { uuid: '6527a854-a114-4bb4-b970-708143dd00eb', name: 'gpu-a100-01', owner: 'physics-lab', rc: 'baremetal.gpu', memGiB: 64, cpus: 32, diskGb: 480, gpus: 1, gpuModel: 'A100-40GB', traits: ['CUSTOM_GPU_A100'], caps: UEFI, rack: 'B07' },
  { uuid: '5f2cbff3-ac66-413c-ae2f-5dffface8115', name: 'gpu-a100-02', owner: 'physics-lab', rc: 'baremetal.gpu', memGiB: 128, cpus: 64, diskGb: 960, gpus: 2, gpuModel: 'A100-40GB', traits: ['CUSTOM_GPU_A100', 'CUSTOM_NVME'], caps: UEFI, rack: 'B07' },
  { uuid: '2b2b3a97-7c88-4207-b31d-3f3b547c3b58', name: 'gpu-a100-03', owner: 'physics-lab', rc: 'baremetal.gpu', memGiB: 128, cpus: 64, diskGb: 960, gpus: 2, gpuModel: 'A100-80GB', traits: ['CUSTOM_GPU_A100', 'CUSTOM_NVME'], caps: UEFI, rack: 'B08' },
  { uuid: 'a1a245fb-05b5-48a5-b207-d673554d16a2', name: 'gpu-a100-04', owner: 'physics-lab', rc: 'baremetal.gpu', memGiB: 512, cpus: 128, diskGb: 3840, gpus: 8, gpuModel: 'A100-80GB', traits: ['CUSTOM_GPU_A100', 'CUSTOM_NVME'], caps: UEFI, rack: 'B08' },
  { uuid: 'bfa04059-2ac3-4ba3-86ee-50e6376118a3', name: 'gpu-h100-01', owner: 'cs-dept', rc: 'baremetal.gpu', memGiB: 1024, cpus: 192, diskGb: 7680, gpus: 8, gpuModel: 'H100-80GB', traits: ['CUSTOM_GPU_H100', 'CUSTOM_NVME'], caps: UEFI, rack: 'C01' },
  { uuid: 'a7c606e0-fdf0-40a1-92ae-85071e6b5b51', name: 'gpu-v100-01', owner: 'bio-lab', rc: 'baremetal.gpu', memGiB: 96, cpus: 40, diskGb: 1920, gpus: 4, gpuModel: 'V100-16GB', traits: ['CUSTOM_GPU_V100', 'CUSTOM_SLOW'], caps: 'boot_mode:bios,cpu_vt:true', rack: 'A03' },
  { uuid: '78c38486-89b0-4a9d-bc58-0fc37991fd23', name: 'gpu-t4-01', owner: 'cs-dept', rc: 'baremetal.gpu', memGiB: 48, cpus: 24, diskGb: 480, gpus: 1, gpuModel: 'T4-16GB', traits: ['CUSTOM_GPU_T4'], caps: UEFI, rack: 'C02' },
  { uuid: '3d7c172e-a10b-420d-b2e1-f03623decd00', name: 'gpu-t4-02', owner: null, rc: 'baremetal.gpu', memGiB: 48, cpus: 24, diskGb: 480, gpus: 1, gpuModel: 'T4-16GB', traits: ['CUSTOM_GPU_T4'], rack: 'C02' },
  { uuid: '67b16932-0a0b-4e3a-bdee-19a0f4844c0f', name: 'gpu-l40s-01', owner: 'bio-lab', rc: 'baremetal.gpu', memGiB: 256, cpus: 64, diskGb: 1920, gpus: 4, gpuModel: 'L40S-48GB', traits: ['CUSTOM_GPU_L40S', 'CUSTOM_NVME'], caps: UEFI, rack: 'A04' },
  { uuid: 'ee1a7eb1-d450-41ce-bfe8-a19666c02569', name: 'store-01', owner: 'bio-lab', rc: 'baremetal.storage', memGiB: 16, cpus: 8, diskGb: 4000, traits: ['CUSTOM_HDD'], caps: 'boot_mode:uefi', rack: 'A01' },
  { uuid: 'c822db02-6be4-4f8b-9a6c-d6f2352cd27d', name: 'store-02', owner: 'bio-lab', rc: 'baremetal.storage', memGiB: 32, cpus: 16, diskGb: 8000, traits: ['CUSTOM_HDD'], caps: 'boot_mode:uefi', rack: 'A01' },
  { uuid: 'dfbd0eab-9448-44b3-ac13-0b845e92b8e4', name: 'store-03', owner: 'cs-dept', rc: 'baremetal.storage', memGiB: 16, cpus: 8, diskGb: 12000, traits: ['CUSTOM_HDD', 'CUSTOM_SLOW'], rack: 'C03' },
  { uuid: '9e67ddee-60f5-4163-b2c9-f37d89cc75d7', name: 'store-nvme-01', owner: 'physics-lab', rc: 'baremetal.storage', memGiB: 32, cpus: 16, diskGb: 1920, traits: ['CUSTOM_NVME'], caps: UEFI, rack: 'B09' },
  { uuid: 'cda65cc0-c8c3-4501-a1a7-e1c10a5a409b', name: 'cpu-01', owner: 'cs-dept', rc: 'baremetal.compute', memGiB: 8, cpus: 4, diskGb: 240, rack: 'C04' },
  { uuid: 'edcad24c-c8b6-401a-ac4d-4ef33ebd0daf', name: 'cpu-02', owner: 'cs-dept', rc: 'baremetal.compute', memGiB: 16, cpus: 8, diskGb: 480, caps: UEFI, rack: 'C04' },
  { uuid: '99243618-b67a-464c-8320-0c0990cd65e4', name: 'cpu-03', owner: 'physics-lab', rc: 'baremetal.compute', memGiB: 32, cpus: 16, diskGb: 480, caps: UEFI, rack: 'B09' },
  { uuid: '1eeb5513-80a0-421e-97db-e6038581beee', name: 'bigmem-01', owner: 'physics-lab', rc: 'baremetal.compute', memGiB: 1024, cpus: 96, diskGb: 1920, traits: ['CUSTOM_NVME'], caps: UEFI, rack: 'B10' },
  { uuid: '5b364d3c-0291-4501-b785-79bb7ec95ea5', name: 'arm-01', owner: 'cs-dept', rc: 'baremetal.compute', memGiB: 256, cpus: 80, diskGb: 960, arch: 'aarch64', traits: ['CUSTOM_NVME'], caps: 'boot_mode:uefi', rack: 'C05' },
  { uuid: '6611cb34-836d-431f-8af0-b2248b6514f7', name: 'arm-02', owner: null, rc: 'baremetal.compute', memGiB: 32, cpus: 32, diskGb: 480, arch: 'aarch64', caps: 'boot_mode:uefi', rack: 'C05' },
  { uuid: '1cd83151-6158-4757-a22f-e4b4ad21fb3c', name: 'cpu-old-01', owner: null, rc: 'baremetal.compute', memGiB: 16, cpus: 8, diskGb: 300, traits: ['CUSTOM_SLOW'], rack: 'A02', maintenance: 'DIMM B2 reports ECC errors; replacement ordered' },
];

/** The built-in demo inventory (used when LEASEHOLD_SIMULATED_NODES is not set). Fresh objects on every call. */
export function demoInventory(): SimulatedNodeSpec[] {
  return ROWS.map((row, index) => {
    const arch = row.arch ?? 'x86_64';
    // aarch64 servers speak Redfish, the x86 ones IPMI: both carry credentials that must never leave the driver.
    const bmcAddress = `10.20.${Math.floor(index / 10) + 1}.${(index % 10) + 11}`;
    const driverInfo =
      arch === 'aarch64'
        ? { redfish_address: `https://${bmcAddress}`, redfish_system_id: '/redfish/v1/Systems/1', redfish_username: 'admin', redfish_password: DEMO_BMC_PASSWORD }
        : { ipmi_address: bmcAddress, ipmi_username: 'admin', ipmi_password: DEMO_BMC_PASSWORD };
    return {
      uuid: row.uuid,
      name: row.name,
      owner: row.owner,
      resource_class: row.rc,
      properties: {
        memory_mb: row.memGiB * GIB,
        cpus: row.cpus,
        local_gb: row.diskGb,
        cpu_arch: arch,
        ...(row.gpus === undefined ? {} : { gpus: row.gpus, gpu_model: row.gpuModel ?? 'unknown' }),
        ...(row.caps === undefined ? {} : { capabilities: row.caps }),
      },
      traits: [...(row.traits ?? [])],
      extra: { rack: row.rack, datacenter: 'dc1' },
      driver_info: driverInfo,
      provision_state: 'available',
      power_state: 'power off',
      maintenance: row.maintenance !== undefined,
      maintenance_reason: row.maintenance ?? null,
    };
  });
}
