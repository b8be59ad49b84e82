import type { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InvalidStateError } from '../../src/domain/errors.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import type { SimulatedNodeSpec, SimulatedTimings } from '../../src/drivers/simulated/simulated-driver.js';

const X86 = '0b6a5c3e-3333-4ccc-8ccc-000000000001';
const ARM = '0b6a5c3e-3333-4ccc-8ccc-000000000002';
const NODES: SimulatedNodeSpec[] = [
  { uuid: X86, name: 'gpu-a100-01', properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', gpus: 2 } },
  { uuid: ARM, name: 'arm-01', properties: { memory_mb: 32768, cpus: 80, local_gb: 960, cpu_arch: 'aarch64' }, power_state: 'power on' },
];

/** A driver on a manual clock whose consoles are already enabled. */
async function setup(timings: Partial<SimulatedTimings> = {}) {
  const clock = new ManualClock();
  const driver = new SimulatedDriver({ nodes: NODES, clock, timings: { powerMs: 100, consoleMs: 10, bootOutputMs: 0, ...timings } });
  for (const id of [X86, ARM]) await driver.setConsoleEnabled(id, true);
  await clock.advance(10);
  return { clock, driver };
}

/** Everything a console stream has said so far, and whether it has ended. */
function watch(stream: Duplex) {
  let text = '';
  let ended = false;
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  stream.on('end', () => (ended = true));
  const flush = () => new Promise<void>((r) => setImmediate(r));
  return {
    async text() {
      await flush();
      return text;
    },
    async ended() {
      await flush();
      return ended;
    },
    /** What it said since the last take (drains the banner, for instance). */
    async take() {
      await flush();
      const said = text;
      text = '';
      return said;
    },
  };
}

describe('simulated serial console', () => {
  it('reports its connection info only while enabled, and refuses connections while disabled', async () => {
    const clock = new ManualClock();
    const driver = new SimulatedDriver({ nodes: NODES, clock, timings: { consoleMs: 10 } });
    expect(await driver.getConsole(X86)).toEqual({ enabled: false, info: null });
    const err = await driver.connectConsole(X86).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidStateError);
    await driver.setConsoleEnabled(X86, true);
    expect((await driver.getNode(X86)).reservation).toBe('simulated');
    await clock.advance(10);
    expect(await driver.getConsole(X86)).toEqual({ enabled: true, info: { type: 'simulated', url: `simulated://${X86}` } });
    expect((await driver.getNode(X86)).console_enabled).toBe(true);
  });

  it('greets with a banner and, on a running node, a login prompt', async () => {
    const { driver } = await setup();
    const arm = watch(await driver.connectConsole(ARM));
    expect(await arm.text()).toBe(`[Leasehold simulated serial console: arm-01 (${ARM}) on ttyAMA0]\r\n\r\narm-01 login: `);
    const off = watch(await driver.connectConsole(X86));
    expect(await off.text()).toMatch(/^\[Leasehold simulated serial console: gpu-a100-01 .* on ttyS0\]\r\n\[the node is powered off/);
  });

  it('echoes keystrokes with CR as CRLF, hides the password and never lets anyone in', async () => {
    const { driver } = await setup();
    const stream = await driver.connectConsole(ARM);
    const out = watch(stream);
    await out.take();
    stream.write('roox\x7ft\r');
    expect(await out.take()).toBe('roox\b \bt\r\nPassword: ');
    stream.write('hunter2\r\n');
    expect(await out.take()).toBe('\r\n\r\nLogin incorrect\r\narm-01 login: ');
    stream.write('\x1b[Aab\x03');
    expect(await out.take()).toBe('ab^C\r\narm-01 login: ');
  });

  it('prints the boot messages when the node powers on while connected, ending at the login prompt', async () => {
    const { clock, driver } = await setup();
    const out = watch(await driver.connectConsole(X86));
    await driver.setPowerState(X86, 'power on');
    await clock.advance(100);
    const text = await out.text();
    expect(text).toContain('[    0.000000] Linux version 6.1.0-28-amd64');
    expect(text).toContain('smpboot: Allowing 32 CPUs');
    expect(text).toContain('Memory: ');
    expect(text.match(/\[10de:/g)).toHaveLength(2); // its two GPUs
    expect(text).toContain('Detected architecture x86-64.');
    expect(text.endsWith('Debian GNU/Linux 12 gpu-a100-01 ttyS0\r\n\r\ngpu-a100-01 login: ')).toBe(true);
  });

  it('scrolls the boot messages over the boot time, then prints the prompt', async () => {
    const { clock, driver } = await setup({ bootOutputMs: 3_000 });
    const out = watch(await driver.connectConsole(ARM));
    await out.take();
    await driver.setPowerState(ARM, 'rebooting');
    await clock.advance(100 + 1_500);
    const half = await out.text();
    expect(half).toContain('Linux version 6.1.0-28-arm64');
    expect(half).not.toContain('login:');
    await clock.advance(1_500);
    const all = await out.text();
    expect(all).toContain('Detected architecture arm64.');
    expect(all.endsWith('arm-01 login: ')).toBe(true);
  });

  it('shows the agent ramdisk and then the installed system while Ironic deploys', async () => {
    const { clock, driver } = await setup({ deployMs: 1_000 });
    const out = watch(await driver.connectConsole(X86));
    await driver.setProvisionState(X86, 'active');
    await clock.advance(1_000);
    const text = await out.text();
    expect(text).toContain('Started ironic-python-agent.service');
    expect(text.indexOf('localhost login: ')).toBeLessThan(text.lastIndexOf('gpu-a100-01 login: '));
  });

  it('several viewers see the same output, including what any of them types', async () => {
    const { driver } = await setup();
    const first = await driver.connectConsole(ARM);
    const a = watch(first);
    const b = watch(await driver.connectConsole(ARM));
    await a.take();
    await b.take();
    first.write('admin');
    expect(await a.take()).toBe('admin');
    expect(await b.take()).toBe('admin');
  });

  it('disabling the console ends every open stream', async () => {
    const { clock, driver } = await setup();
    const a = watch(await driver.connectConsole(X86));
    const b = watch(await driver.connectConsole(X86));
    await driver.setConsoleEnabled(X86, false);
    await clock.advance(10);
    expect(await a.ended()).toBe(true);
    expect(await b.ended()).toBe(true);
    await expect(driver.connectConsole(X86)).rejects.toBeInstanceOf(InvalidStateError);
  });

  it('removing the node or closing the driver ends the streams', async () => {
    const { driver } = await setup();
    const removed = watch(await driver.connectConsole(X86));
    const closed = watch(await driver.connectConsole(ARM));
    driver.removeNode(X86);
    expect(await removed.ended()).toBe(true);
    expect(await closed.ended()).toBe(false);
    await driver.close();
    expect(await closed.ended()).toBe(true);
  });
});
