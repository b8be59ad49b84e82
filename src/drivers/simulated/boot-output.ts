/**
 * What a node prints on its serial console while it boots: firmware, kernel ring buffer, systemd, then a getty.
 * Derived from the node's properties (architecture, memory, CPUs, GPUs) so each machine looks like itself.
 * Pure: the console decides when each line appears.
 */

/** `os`: the node boots its installed system; `ramdisk`: Ironic's agent ramdisk (cleaning, deploying). */
export type BootKind = 'os' | 'ramdisk';

export interface BootTarget {
  readonly uuid: string;
  readonly name: string;
  readonly properties: Readonly<Record<string, unknown>>;
}

export interface BootSequence {
  /** Lines without line endings, in order. */
  readonly lines: readonly string[];
  /** What the getty shows: `/etc/issue` and the login prompt. */
  readonly issue: string;
  readonly loginPrompt: string;
}

export function bootSequence(node: BootTarget, kind: BootKind): BootSequence {
  const arm = String(node.properties.cpu_arch ?? 'x86_64') === 'aarch64';
  const memoryKb = Math.round(numberProp(node.properties.memory_mb, 8192) * 1024);
  const cpus = Math.max(1, Math.round(numberProp(node.properties.cpus, 4)));
  const gpus = Math.min(8, Math.max(0, Math.round(numberProp(node.properties.gpus, 0))));
  const tty = arm ? 'ttyAMA0' : 'ttyS0';
  const kernel = arm ? '6.1.0-28-arm64' : '6.1.0-28-amd64';
  const hostname = kind === 'ramdisk' ? 'localhost' : node.name;
  const root = kind === 'ramdisk' ? 'ipa-api-url=http://ironic:6385 BOOTIF=01-52-54-00-12-34-56' : `root=UUID=${node.uuid} ro`;

  const firmware = arm
    ? ['UEFI firmware (version 2.7 built by Leasehold simulated hardware)', kind === 'ramdisk' ? '>>Start PXE over IPv4.' : 'Booting `Debian GNU/Linux\'']
    : ['Simulated BIOS 2.4.1 (Leasehold fake hardware), 01/15/2025', kind === 'ramdisk' ? '>>Start PXE over IPv4.' : 'Booting `Debian GNU/Linux\''];
  const kernelLines: Array<[number, string]> = [
    [0, `Linux version ${kernel} (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)`],
    arm ? [0, 'Booting Linux on physical CPU 0x0000000000 [0x413fd0c1]'] : [0, 'BIOS-provided physical RAM map:'],
    [0, `Command line: BOOT_IMAGE=/boot/vmlinuz-${kernel} ${root} console=tty0 console=${tty},115200n8`],
    [0, `DMI: Leasehold Simulated Server/${node.name}, BIOS 2.4.1 01/15/2025`],
    [0.004012, `Memory: ${memoryKb - Math.round(memoryKb * 0.02)}K/${memoryKb}K available`],
    [0.081234, `smpboot: Allowing ${cpus} CPUs, 0 hotplug CPUs`],
    [0.412345, arm ? 'ACPI: PCI Root Bridge [PCI0] (domain 0000 [bus 00-ff])' : 'PCI: Using configuration type 1 for base access'],
  ];
  for (let i = 0; i < gpus; i++) {
    kernelLines.push([0.9 + i * 0.011, `pci 0000:${(0x17 + i * 0x10).toString(16)}:00.0: [10de:20b0] type 00 class 0x030200`]);
  }
  kernelLines.push(
    [1.204311, `serial 00:04: ${tty} at I/O 0x3f8 (irq = 4, base_baud = 115200) is a 16550A`],
    [1.873210, kind === 'ramdisk' ? 'Freeing initrd memory: 412344K' : 'EXT4-fs (sda1): mounted filesystem with ordered data mode. Quota mode: none.'],
    [2.104567, 'systemd[1]: systemd 252.31-1~deb12u1 running in system mode (+PAM +AUDIT +SELINUX +APPARMOR)'],
    [2.118901, `systemd[1]: Detected architecture ${arm ? 'arm64' : 'x86-64'}.`],
    [2.132004, `systemd[1]: Hostname set to <${hostname}>.`],
  );
  const services = [
    'Started systemd-journald.service - Journal Service.',
    'Reached target network-online.target - Network is Online.',
    'Started ssh.service - OpenBSD Secure Shell server.',
    ...(kind === 'ramdisk' ? ['Started ironic-python-agent.service - Ironic Python Agent.'] : []),
    'Reached target multi-user.target - Multi-User System.',
  ];
  return {
    lines: [...firmware, ...kernelLines.map(([at, text]) => `${kernelTime(at)} ${text}`), ...services.map((s) => `[  OK  ] ${s}`)],
    issue: kind === 'ramdisk' ? `Debian GNU/Linux 12 (ironic-python-agent) ${hostname} ${tty}` : `Debian GNU/Linux 12 ${hostname} ${tty}`,
    loginPrompt: `${hostname} login: `,
  };
}

/** The kernel's `[    0.000000]` timestamp. */
function kernelTime(seconds: number): string {
  const [whole, fraction] = seconds.toFixed(6).split('.');
  return `[${(whole ?? '0').padStart(5, ' ')}.${fraction ?? '000000'}]`;
}

function numberProp(raw: unknown, fallback: number): number {
  const value = typeof raw === 'string' ? Number(raw) : raw;
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
