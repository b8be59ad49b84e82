import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import {
  AlreadyExistsError,
  BackendUnavailableError,
  InvalidRequestError,
  InvalidStateError,
  NodeBusyError,
  NotFoundError,
} from '../../src/domain/errors.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import type { ProvisionVerb } from '../../src/drivers/hardware-driver.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import type { SimulatedNodeSpec, SimulatedTimings } from '../../src/drivers/simulated/simulated-driver.js';
import { describeDriverContract } from './driver-contract.js';
import type { DriverContractSetup } from './driver-contract.js';

const FAST: Partial<SimulatedTimings> = {
  powerMs: 10, cleanMs: 20, deployMs: 15, undeployMs: 10, manageMs: 5, consoleMs: 5, bootOutputMs: 0,
};

function contractSetup(clockKind: 'real' | 'manual'): DriverContractSetup {
  return async (nodes) => {
    const clock = clockKind === 'manual' ? new ManualClock() : systemClock;
    const driver = new SimulatedDriver({ nodes, clock, timings: FAST });
    const ids = Object.fromEntries((await driver.listNodes()).map((n) => [n.name ?? '', n.uuid]));
    return {
      driver,
      ids,
      strict: true,
      settleTimeoutMs: 5_000,
      ...(clock instanceof ManualClock ? { pause: (ms: number) => clock.advance(ms), seesEveryState: true } : {}),
      async startFailingCleaning(id) {
        driver.setFaults({ cleanFailure: [id] });
        await driver.setProvisionState(id, 'clean', { cleanSteps: [{ interface: 'deploy', step: 'erase_devices' }] });
      },
      close: () => driver.close(),
    };
  };
}

describeDriverContract('simulated driver, real clock, millisecond timings', contractSetup('real'));
describeDriverContract('simulated driver, manual clock', contractSetup('manual'));

const ID = '0b6a5c3e-2222-4bbb-8bbb-000000000001';
const SECRET = 'ipmi-secret-never-leaks';
const node = (over: Partial<SimulatedNodeSpec> = {}): SimulatedNodeSpec => ({
  uuid: ID,
  name: 'sim-01',
  owner: 'physics-lab',
  resource_class: 'baremetal.gpu',
  properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 },
  driver_info: { ipmi_address: '10.0.0.9', ipmi_password: SECRET },
  ...over,
});
/** Demo timings on a ManualClock: the test moves time, nothing waits for real. */
function manual(spec: Partial<SimulatedNodeSpec> = {}, timings: Partial<SimulatedTimings> = {}) {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  const driver = new SimulatedDriver({ nodes: [node(spec)], clock, timings });
  return { clock, driver, get: () => driver.getNode(ID) };
}

describe('simulated driver: the provision state machine on a manual clock', () => {
  it('cleaning a node takes it through cleaning and clean wait back to available, powered off', async () => {
    const { clock, driver, get } = manual({ provision_state: 'manageable' });
    await driver.setProvisionState(ID, 'provide');
    expect(await get()).toMatchObject({
      provision_state: 'cleaning', target_provision_state: 'available', reservation: 'simulated', power_state: 'power on',
      updated_at: '2030-01-01T00:00:00.000Z',
    });
    await clock.advance(4_000);
    expect(await get()).toMatchObject({ provision_state: 'clean wait', target_provision_state: 'available', reservation: null });
    await clock.advance(14_000);
    expect(await get()).toMatchObject({ provision_state: 'cleaning', reservation: 'simulated' });
    await clock.advance(2_000);
    expect(await get()).toMatchObject({
      provision_state: 'available', target_provision_state: null, reservation: null, power_state: 'power off',
      updated_at: '2030-01-01T00:00:20.000Z',
    });
  });

  const cases: Array<[string, ProvisionVerb, string, string[]]> = [
    ['enroll', 'manage', 'manageable', ['verifying']],
    ['available', 'manage', 'manageable', []],
    ['clean failed', 'manage', 'manageable', []],
    ['manageable', 'clean', 'manageable', ['cleaning', 'clean wait']],
    ['available', 'active', 'active', ['deploying', 'wait call-back']],
    ['deploy failed', 'active', 'active', ['deploying']],
    ['deploy failed', 'rebuild', 'active', ['deploying']],
    ['error', 'rebuild', 'active', ['deploying']],
    ['active', 'rebuild', 'active', ['deploying', 'wait call-back']],
    ['active', 'deleted', 'available', ['deleting', 'cleaning', 'clean wait']],
    ['deploy failed', 'deleted', 'available', ['deleting', 'cleaning']],
    ['error', 'deleted', 'available', ['deleting']],
  ];
  it.each(cases)('from %s, "%s" ends in %s', async (start, verb, end, through) => {
    const { clock, driver, get } = manual({ provision_state: start }, { bootOutputMs: 0 });
    const cleanSteps = verb === 'clean' ? [{ interface: 'deploy', step: 'erase_devices_metadata' }] : undefined;
    await driver.setProvisionState(ID, verb, cleanSteps ? { cleanSteps } : {});
    const states: string[] = [];
    for (let t = 0; t < 60_000; t += 250) {
      const current = (await get()).provision_state;
      if (states.at(-1) !== current) states.push(current);
      await clock.advance(250);
    }
    expect(states).toEqual(expect.arrayContaining(through));
    expect(await get()).toMatchObject({ provision_state: end, target_provision_state: null, reservation: null });
  });

  const refused: Array<[string, ProvisionVerb]> = [
    ['enroll', 'provide'], ['manageable', 'active'], ['manageable', 'manage'], ['manageable', 'abort'],
    ['available', 'clean'], ['available', 'provide'], ['active', 'provide'], ['active', 'manage'],
    ['clean failed', 'provide'], ['enroll', 'deleted'],
  ];
  it.each(refused)('from %s, "%s" is refused with Ironic\'s message', async (start, verb) => {
    const { driver, get } = manual({ provision_state: start });
    const err = await driver.setProvisionState(ID, verb).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidStateError);
    expect((err as Error).message).toBe(
      `The requested action "${verb}" can not be performed on node "${ID}" while it is in state "${start}".`,
    );
    expect((await get()).provision_state).toBe(start);
  });

  it('a locked node refuses every change with Ironic\'s "locked" message', async () => {
    const { driver } = manual();
    await driver.setPowerState(ID, 'power on');
    const err = await driver.updateNode(ID, { lessee: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodeBusyError);
    expect((err as NodeBusyError).retryable).toBe(true);
    expect((err as Error).message).toBe(
      `Node ${ID} is locked by host simulated, please retry after the current operation is completed.`,
    );
    // Even a verb the state machine would refuse reports the lock first, as Ironic's API does.
    await expect(driver.setProvisionState(ID, 'provide')).rejects.toBeInstanceOf(NodeBusyError);
    await expect(driver.setConsoleEnabled(ID, true)).rejects.toBeInstanceOf(NodeBusyError);
    await expect(driver.setBootDevice(ID, 'disk')).rejects.toBeInstanceOf(NodeBusyError);
  });

  it('in clean wait the lock is released: updates work, other verbs are refused, abort ends in clean failed', async () => {
    const { clock, driver, get } = manual({ provision_state: 'manageable' });
    await driver.setProvisionState(ID, 'provide');
    await clock.advance(5_000);
    expect(await get()).toMatchObject({ provision_state: 'clean wait', reservation: null });
    await expect(driver.updateNode(ID, { lessee: null, extra: { wiped: 'soon' } })).resolves.toBeDefined();
    await expect(driver.setProvisionState(ID, 'provide')).rejects.toBeInstanceOf(InvalidStateError);
    await driver.setProvisionState(ID, 'abort');
    expect(await get()).toMatchObject({
      provision_state: 'clean failed', target_provision_state: 'available', power_state: 'power off',
      last_error: 'By request, the clean operation was aborted', maintenance: false, reservation: null,
    });
    await clock.advance(60_000); // the aborted cleaning's timers are gone
    expect((await get()).provision_state).toBe('clean failed');
  });

  it('undeploying during wait call-back abandons the deployment', async () => {
    const { clock, driver, get } = manual();
    await driver.setProvisionState(ID, 'active');
    await clock.advance(6_000);
    expect((await get()).provision_state).toBe('wait call-back');
    await driver.setProvisionState(ID, 'deleted');
    expect(await get()).toMatchObject({ provision_state: 'deleting', power_state: 'power off' });
    await clock.advance(60_000);
    expect(await get()).toMatchObject({ provision_state: 'available', power_state: 'power off' });
  });

  it('deploy powers the node on and makes it boot from disk', async () => {
    const { clock, driver, get } = manual();
    await driver.setProvisionState(ID, 'active');
    await clock.advance(15_000);
    expect(await get()).toMatchObject({ provision_state: 'active', power_state: 'power on' });
    expect(await driver.getBootDevice(ID)).toEqual({ boot_device: 'disk', persistent: true });
  });

  it('manual cleaning requires well-formed clean steps and fails on a step the hardware lacks', async () => {
    const { clock, driver, get } = manual({ provision_state: 'manageable' });
    await expect(driver.setProvisionState(ID, 'clean')).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(driver.setProvisionState(ID, 'clean', { cleanSteps: [{ step: 'x' }] })).rejects.toThrow(/clean_steps\[0\]/);
    await expect(driver.setProvisionState(ID, 'provide', { cleanSteps: [] })).rejects.toBeInstanceOf(InvalidRequestError);
    await driver.setProvisionState(ID, 'clean', { cleanSteps: [{ interface: 'deploy', step: 'no_such_step' }] });
    await clock.advance(20_000);
    const failed = await get();
    expect(failed).toMatchObject({ provision_state: 'clean failed', target_provision_state: 'manageable', maintenance: false });
    expect(failed.last_error).toContain('no_such_step');
  });

  it('a cleaning fault ends in clean failed with maintenance; provide waits until maintenance is cleared', async () => {
    const { clock, driver, get } = manual({ provision_state: 'active' });
    driver.setFaults({ cleanFailure: ['sim-01'] });
    await driver.setProvisionState(ID, 'deleted');
    await clock.advance(30_000);
    const failed = await get();
    expect(failed).toMatchObject({ provision_state: 'clean failed', maintenance: true, power_state: 'power off' });
    expect(failed.last_error).toMatch(/clean step .*erase_devices_metadata.* on node/);
    expect(failed.maintenance_reason).toBe(failed.last_error);
    driver.clearFaults();
    await driver.setProvisionState(ID, 'manage');
    const refused = await driver.setProvisionState(ID, 'provide').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidStateError);
    expect((refused as Error).message).toMatch(/maintenance mode/);
    await driver.setPowerState(ID, 'power on'); // power still works in maintenance
    await clock.advance(2_000);
    driver.setMaintenance(ID, false);
    await driver.setProvisionState(ID, 'provide');
    await clock.advance(20_000);
    expect(await get()).toMatchObject({ provision_state: 'available', maintenance: false, maintenance_reason: null });
  });

  it('a fault set while an operation runs hits it', async () => {
    const { clock, driver, get } = manual({ provision_state: 'manageable' });
    await driver.setProvisionState(ID, 'provide');
    await clock.advance(1_000);
    driver.setFaults({ cleanFailure: true });
    await clock.advance(20_000);
    expect((await get()).provision_state).toBe('clean failed');
  });

  it('a deploy fault ends in deploy failed, and a rebuild recovers once it is gone', async () => {
    const { clock, driver, get } = manual({}, {});
    driver.setFaults({ deployFailure: [ID] });
    await driver.setProvisionState(ID, 'active');
    await clock.advance(15_000);
    expect(await get()).toMatchObject({ provision_state: 'deploy failed', target_provision_state: 'active' });
    expect((await get()).last_error).toMatch(/write_image/);
    driver.setFaults({ deployFailure: false });
    await driver.setProvisionState(ID, 'rebuild');
    await clock.advance(15_000);
    expect(await get()).toMatchObject({ provision_state: 'active', last_error: null });
  });

  it('a power fault during verification sends an enrolled node back to enroll', async () => {
    const { clock, driver, get } = manual({ provision_state: 'enroll' }, {});
    driver.setFaults({ powerFailure: true });
    await driver.setProvisionState(ID, 'manage');
    expect((await get()).provision_state).toBe('verifying');
    await clock.advance(1_500);
    expect(await get()).toMatchObject({ provision_state: 'enroll', target_provision_state: null });
    expect((await get()).last_error).toMatch(/Failed to verify/);
  });
});

describe('simulated driver: power, faults and operator helpers', () => {
  it('reboot shows target power on and ends powered on', async () => {
    const { clock, driver, get } = manual();
    await driver.setPowerState(ID, 'rebooting');
    expect(await get()).toMatchObject({ power_state: 'power off', target_power_state: 'power on', reservation: 'simulated' });
    await clock.advance(2_000);
    expect(await get()).toMatchObject({ power_state: 'power on', target_power_state: null, reservation: null });
  });

  it('a power fault leaves the power state unchanged with last_error, and the next success clears it', async () => {
    const { clock, driver, get } = manual();
    driver.setFaults({ powerFailure: [ID] });
    await driver.setPowerState(ID, 'power on');
    await clock.advance(2_000);
    const failed = await get();
    expect(failed).toMatchObject({ power_state: 'power off', target_power_state: null, reservation: null });
    expect(failed.last_error).toMatch(/^Failed to change power state to 'power on'/);
    driver.setFaults({ powerFailure: false });
    await driver.setPowerState(ID, 'power on');
    await clock.advance(2_000);
    expect(await get()).toMatchObject({ power_state: 'power on', last_error: null });
  });

  it('while the backend is unavailable every call fails with BackendUnavailableError', async () => {
    const clock = new ManualClock();
    const driver = new SimulatedDriver({ nodes: [node()], clock, faults: { unavailable: true } });
    const calls: Array<() => Promise<unknown>> = [
      () => driver.ping(), () => driver.listNodes(), () => driver.getNode(ID), () => driver.updateNode(ID, {}),
      () => driver.setPowerState(ID, 'power on'), () => driver.setBootDevice(ID, 'pxe'), () => driver.getBootDevice(ID),
      () => driver.setConsoleEnabled(ID, true), () => driver.getConsole(ID), () => driver.connectConsole(ID),
      () => driver.setProvisionState(ID, 'manage'),
    ];
    for (const call of calls) await expect(call()).rejects.toBeInstanceOf(BackendUnavailableError);
    driver.setFaults({ unavailable: false });
    await expect(driver.ping()).resolves.toBeUndefined();
    expect(driver.faults).toEqual({ unavailable: false });
  });

  it('injected latency delays every call on the driver clock', async () => {
    const { clock, driver } = manual();
    driver.setFaults({ latencyMs: 300 });
    let done = false;
    const pending = driver.getNode(ID).then(() => (done = true));
    await clock.advance(299);
    expect(done).toBe(false);
    await clock.advance(1);
    await pending;
    expect(done).toBe(true);
  });

  it('resolves nodes by name as Ironic does, and unknown ones are NotFoundError', async () => {
    const { driver } = manual();
    expect((await driver.getNode('sim-01')).uuid).toBe(ID);
    expect((await driver.getNode(ID.toUpperCase())).uuid).toBe(ID);
    await expect(driver.getNode('nope')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('returns copies: changing a result does not change the hardware, and driver_info never appears', async () => {
    const { driver } = manual();
    const copy = (await driver.getNode(ID)) as unknown as { properties: Record<string, unknown>; traits: string[] };
    copy.properties.memory_mb = 1;
    copy.traits.push('CUSTOM_HACKED');
    const again = await driver.getNode(ID);
    expect(again.properties.memory_mb).toBe(65536);
    expect(again.traits).toEqual([]);
    expect(JSON.stringify([again, await driver.listNodes()])).not.toContain(SECRET);
  });

  it('validates updates: extra values are strings or null', async () => {
    const { driver } = manual();
    await expect(driver.updateNode(ID, { extra: { n: 1 as unknown as string } })).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(driver.updateNode(ID, { owner: 7 as unknown as string })).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('operators add, change and remove nodes behind Leasehold\'s back', async () => {
    const { clock, driver } = manual();
    const added = driver.addNode({ name: 'late-01', properties: { memory_mb: 1024, cpus: 1, local_gb: 10 } });
    expect(added.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(() => driver.addNode({ name: 'late-01', properties: { memory_mb: 1, cpus: 1, local_gb: 1 } })).toThrow(AlreadyExistsError);
    expect(() => driver.addNode({ uuid: ID, name: 'other', properties: { memory_mb: 1, cpus: 1, local_gb: 1 } })).toThrow(AlreadyExistsError);
    await clock.advance(60_000);
    const changed = driver.updateProperties(ID, { memory_mb: 131072, gpus: null, nics: 4 });
    expect(changed.properties).toEqual({ memory_mb: 131072, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', nics: 4 });
    expect(changed.updated_at).toBe('2030-01-01T00:01:00.000Z');
    driver.removeNode('late-01');
    await expect(driver.getNode(added.uuid)).rejects.toBeInstanceOf(NotFoundError);
    expect((await driver.listNodes()).map((n) => n.name)).toEqual(['sim-01']);
  });

  it('generates the same uuid for the same name at every start', async () => {
    const spec = { name: 'no-uuid-01', properties: { memory_mb: 1024, cpus: 1, local_gb: 10 } };
    const a = await new SimulatedDriver({ nodes: [spec] }).listNodes();
    const b = await new SimulatedDriver({ nodes: [spec] }).listNodes();
    expect(a[0]?.uuid).toBe(b[0]?.uuid);
  });

  it('rejects a bad node spec at construction, naming the field', () => {
    const bad = { ...node(), properties: { memory_mb: -1, cpus: 1, local_gb: 1 } };
    expect(() => new SimulatedDriver({ nodes: [bad] })).toThrow('nodes[0].properties.memory_mb: expected a non-negative number');
    expect(() => new SimulatedDriver({ nodes: [], timings: { powerMs: -5 } })).toThrow(InvalidRequestError);
  });

  it('close() stops running operations and makes later calls fail', async () => {
    const { clock, driver } = manual();
    await driver.setPowerState(ID, 'power on');
    await driver.close();
    await clock.advance(10_000);
    await expect(driver.getNode(ID)).rejects.toBeInstanceOf(BackendUnavailableError);
    await expect(driver.close()).resolves.toBeUndefined();
  });
});
