import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidStateError, NodeBusyError, NotFoundError } from '../../src/domain/errors.js';
import type { AccessGuard, DriverNode, HardwareDriver } from '../../src/drivers/hardware-driver.js';

/**
 * The behaviour every HardwareDriver shares, run on the simulated driver now and on the ironic driver (against
 * a real Ironic with fake-hardware) later. It only asserts what both do: it polls with a timeout instead of
 * assuming timings, retries Ironic's transient "node is locked", and tolerates fast transitions it may miss
 * unless the fixture says its locks or states are deterministic (`strict`, `seesEveryState`).
 */

/** The fake BMC password in every contract node's driver_info: must never appear in anything a driver returns. */
export const CONTRACT_BMC_PASSWORD = 'contract-bmc-secret-7f3a';

export interface ContractNodeSpec {
  readonly name: string;
  readonly owner: string | null;
  readonly resource_class: string;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly traits: readonly string[];
  readonly driver_info: Readonly<Record<string, unknown>>;
}

const bmc = (address: string) => ({ ipmi_address: address, ipmi_username: 'admin', ipmi_password: CONTRACT_BMC_PASSWORD });

/** What every fixture must enrol, each node `available`, powered off, console disabled, no lessee, no extra. */
export const CONTRACT_NODES: readonly ContractNodeSpec[] = [
  {
    name: 'contract-gpu-1',
    owner: 'physics-lab',
    resource_class: 'baremetal.gpu',
    properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', gpus: 1, capabilities: 'boot_mode:uefi' },
    traits: ['CUSTOM_GPU_A100', 'CUSTOM_NVME'],
    driver_info: bmc('192.0.2.11'),
  },
  {
    name: 'contract-store-1',
    owner: 'bio-lab',
    resource_class: 'baremetal.storage',
    properties: { memory_mb: 16384, cpus: 8, local_gb: 4000, cpu_arch: 'x86_64' },
    traits: [],
    driver_info: bmc('192.0.2.12'),
  },
  {
    name: 'contract-spare-1',
    owner: null,
    resource_class: 'baremetal.compute',
    properties: { memory_mb: 8192, cpus: 4, local_gb: 240, cpu_arch: 'aarch64' },
    traits: ['CUSTOM_SLOW'],
    driver_info: bmc('192.0.2.13'),
  },
];

export interface DriverContractFixture {
  readonly driver: HardwareDriver;
  /** The uuid of each CONTRACT_NODES entry, by name. */
  readonly ids: Readonly<Record<string, string>>;
  /** Starts, on a `manageable` node, a cleaning that will fail (an injected fault, an unsupported clean step). */
  startFailingCleaning(nodeId: string): Promise<void>;
  /** Lets the backend's time pass (default: real time); a ManualClock fixture advances its clock instead. */
  pause?(ms: number): Promise<void>;
  /**
   * True when locks are deterministic (the simulated driver): the suite then requires the NodeBusyError and
   * console info it otherwise only accepts when a backend happens to show them.
   */
  readonly strict?: boolean;
  /**
   * True when polling every 5 ms of the fixture's time cannot miss a state (a manual clock driven by `pause`):
   * the suite then requires every intermediate state (cleaning, deleting) to be seen.
   */
  readonly seesEveryState?: boolean;
  /** How long a transition may take before the suite gives up (default 10 s). */
  readonly settleTimeoutMs?: number;
  close(): Promise<void>;
}

export type DriverContractSetup = (nodes: readonly ContractNodeSpec[]) => Promise<DriverContractFixture>;

const POLL_MS = 5;

export function describeDriverContract(name: string, setup: DriverContractSetup): void {
  describe(`HardwareDriver contract: ${name}`, () => {
    let fx: DriverContractFixture;
    let driver: HardwareDriver;
    let gpu: string;
    let store: string;
    /** Provision states seen while settling, for "went through cleaning" assertions. */
    let seen: string[];

    const pause = (ms: number) => (fx.pause ? fx.pause(ms) : new Promise<void>((r) => setTimeout(r, ms)));

    /** Polls until `done(node)` holds and no operation holds the node's lock. */
    async function settle(id: string, done: (node: DriverNode) => boolean, what: string): Promise<DriverNode> {
      const limit = fx.settleTimeoutMs ?? 10_000;
      let last: DriverNode | undefined;
      for (let waited = 0; waited <= limit; waited += POLL_MS) {
        last = await driver.getNode(id);
        if (seen.at(-1) !== last.provision_state) seen.push(last.provision_state);
        if (done(last) && last.reservation === null) return last;
        await pause(POLL_MS);
      }
      throw new Error(`node ${id} did not reach ${what} in ${limit} ms; last seen ${JSON.stringify(last)}`);
    }
    const inState = (id: string, state: string) =>
      settle(id, (n) => n.provision_state === state && n.target_provision_state === null, `provision state ${state}`);
    const inPower = (id: string, state: string) =>
      settle(id, (n) => n.power_state === state && n.target_power_state === null, state);

    /** Runs a change, retrying while the backend says the node is locked (Ironic's 409 right after an operation). */
    async function retryBusy<T>(change: () => Promise<T>): Promise<T> {
      for (let attempt = 0; ; attempt++) {
        try {
          return await change();
        } catch (err) {
          if (!(err instanceof NodeBusyError) || attempt >= 50) throw err;
          await pause(POLL_MS * (attempt + 1));
        }
      }
    }

    const expectNoSecret = (value: unknown) => {
      const json = JSON.stringify(value);
      expect(json).not.toContain(CONTRACT_BMC_PASSWORD);
      expect(json).not.toContain('driver_info');
    };

    beforeEach(async () => {
      fx = await setup(CONTRACT_NODES);
      driver = fx.driver;
      gpu = fx.ids['contract-gpu-1'] ?? '';
      store = fx.ids['contract-store-1'] ?? '';
      seen = [];
    });
    afterEach(async () => {
      await fx.close();
    });

    it('answers a ping', async () => {
      await expect(driver.ping()).resolves.toBeUndefined();
    });

    it('lists every enrolled node with its Ironic fields', async () => {
      const nodes = await driver.listNodes();
      for (const spec of CONTRACT_NODES) {
        const node = nodes.find((n) => n.uuid === fx.ids[spec.name]);
        expect(node, spec.name).toBeDefined();
        expect(node).toMatchObject({
          name: spec.name,
          owner: spec.owner,
          lessee: null,
          resource_class: spec.resource_class,
          properties: spec.properties,
          provision_state: 'available',
          power_state: 'power off',
          maintenance: false,
          console_enabled: false,
          reservation: null,
        });
        expect([...(node?.traits ?? [])].sort()).toEqual([...spec.traits].sort());
      }
    });

    it('gets one node by uuid, the same as the list shows it', async () => {
      const node = await driver.getNode(gpu);
      const listed = (await driver.listNodes()).find((n) => n.uuid === gpu);
      expect(node).toMatchObject({ uuid: gpu, name: 'contract-gpu-1', owner: 'physics-lab' });
      expect(node.properties).toEqual(listed?.properties);
      expect(node.updated_at === null || !Number.isNaN(Date.parse(node.updated_at))).toBe(true);
    });

    it('an unknown node id is NotFoundError for every per-node call', async () => {
      const unknown = '00000000-0000-4000-8000-00000000dead';
      const calls: Array<() => Promise<unknown>> = [
        () => driver.getNode(unknown),
        () => driver.updateNode(unknown, { lessee: 'x' }),
        () => driver.setPowerState(unknown, 'power on'),
        () => driver.setProvisionState(unknown, 'manage'),
        () => driver.setBootDevice(unknown, 'pxe'),
        () => driver.getBootDevice(unknown),
        () => driver.setConsoleEnabled(unknown, true),
        () => driver.getConsole(unknown),
        () => driver.connectConsole(unknown),
      ];
      for (const call of calls) await expect(call()).rejects.toBeInstanceOf(NotFoundError);
    });

    it('sets and clears owner and lessee', async () => {
      const set = await retryBusy(() => driver.updateNode(store, { owner: 'cs-dept', lessee: 'physics-lab' }));
      expect(set).toMatchObject({ owner: 'cs-dept', lessee: 'physics-lab' });
      expect(await driver.getNode(store)).toMatchObject({ owner: 'cs-dept', lessee: 'physics-lab' });
      const cleared = await retryBusy(() => driver.updateNode(store, { owner: null, lessee: null }));
      expect(cleared).toMatchObject({ owner: null, lessee: null });
      expect(await driver.getNode(store)).toMatchObject({ owner: null, lessee: null });
    });

    it('clears a lessee and a mark from a stale record of them: what was removed meanwhile costs a fresh read, not a failure', async () => {
      const marked = await retryBusy(() => driver.updateNode(store, { lessee: 'physics-lab', extra: { leasehold_lease: 'l-9', keep: 'me' } }));
      const record = { uuid: marked.uuid, owner: marked.owner, lessee: marked.lessee, extra: marked.extra };
      // Someone took the lessee off in between: the record still shows it.
      await retryBusy(() => driver.updateNode(store, { lessee: null }));
      const cleared = await retryBusy(() => driver.updateNode(store, { lessee: null, extra: { leasehold_lease: null } }, record));
      expect(cleared).toMatchObject({ lessee: null, extra: { keep: 'me' } });
      expect(await driver.getNode(store)).toMatchObject({ lessee: null, extra: { keep: 'me' } });
      expect(await retryBusy(() => driver.updateNode(store, { extra: { keep: null } }, record))).toMatchObject({ extra: {} });
    });

    it('merges extra key by key and removes the keys set to null', async () => {
      await retryBusy(() => driver.updateNode(gpu, { extra: { lease: 'l-1', project: 'bio-lab' } }));
      const merged = await retryBusy(() => driver.updateNode(gpu, { extra: { lease: null, note: 'hello' } }));
      expect(merged.extra).toEqual({ project: 'bio-lab', note: 'hello' });
      expect((await driver.getNode(gpu)).extra).toEqual({ project: 'bio-lab', note: 'hello' });
    });

    it('powers a node on, off and reboots it into power on', async () => {
      await retryBusy(() => driver.setPowerState(gpu, 'power on'));
      await inPower(gpu, 'power on');
      await retryBusy(() => driver.setPowerState(gpu, 'power off'));
      await inPower(gpu, 'power off');
      await retryBusy(() => driver.setPowerState(gpu, 'rebooting'));
      const node = await inPower(gpu, 'power on');
      expect(node.last_error).toBeNull();
    });

    it("asks a caller's guard before acting on its behalf, and sends nothing when it refuses", async () => {
      const ended = new NotFoundError('node', 'contract-gpu-1');
      let asked = 0;
      const refusing: AccessGuard = {
        deadline: null,
        admit: async () => {
          asked++;
          throw ended;
        },
      };
      const calls: Array<() => Promise<void>> = [
        () => driver.setPowerState(gpu, 'power on', { guard: refusing }),
        () => driver.setBootDevice(gpu, 'pxe', false, { guard: refusing }),
        () => driver.setConsoleEnabled(gpu, true, { guard: refusing }),
        () => driver.setProvisionState(gpu, 'manage', { guard: refusing }),
      ];
      for (const call of calls) await expect(call()).rejects.toBe(ended);
      expect(asked).toBe(calls.length);
      await pause(50);
      const node = await driver.getNode(gpu);
      expect(node).toMatchObject({ power_state: 'power off', provision_state: 'available', console_enabled: false, target_power_state: null });
      // A guard that admits lets the call through.
      let admitted = 0;
      const admitting: AccessGuard = { deadline: null, admit: async () => void admitted++ };
      await retryBusy(() => driver.setPowerState(gpu, 'power on', { guard: admitting }));
      await inPower(gpu, 'power on');
      expect(admitted).toBeGreaterThanOrEqual(1);
    });

    it('sets the boot device', async () => {
      await retryBusy(() => driver.setBootDevice(gpu, 'pxe', true));
      const boot = await driver.getBootDevice(gpu);
      expect(boot.boot_device).toBe('pxe');
      expect(typeof boot.persistent).toBe('boolean');
    });

    it('enables the console with connection info and disables it', async () => {
      expect(await driver.getConsole(gpu)).toEqual({ enabled: false, info: null });
      await retryBusy(() => driver.setConsoleEnabled(gpu, true));
      await settle(gpu, (n) => n.console_enabled, 'console enabled');
      const on = await driver.getConsole(gpu);
      expect(on.enabled).toBe(true);
      if (on.info !== null) expect(on.info).toEqual({ type: expect.any(String), url: expect.any(String) });
      if (fx.strict) expect(on.info).not.toBeNull();
      await retryBusy(() => driver.setConsoleEnabled(gpu, false));
      await settle(gpu, (n) => !n.console_enabled, 'console disabled');
      expect(await driver.getConsole(gpu)).toEqual({ enabled: false, info: null });
    });

    it('manage then provide takes a node through cleaning back to available', async () => {
      await retryBusy(() => driver.setProvisionState(gpu, 'manage'));
      await inState(gpu, 'manageable');
      seen = [];
      await retryBusy(() => driver.setProvisionState(gpu, 'provide'));
      const node = await inState(gpu, 'available');
      expect(seen[0]).toMatch(/^(cleaning|clean wait|available)$/);
      if (fx.seesEveryState) expect(seen).toContain('cleaning');
      // Power is not asserted: fake-hardware Ironic cleans without touching it (the simulated driver powers off).
      expect(node).toMatchObject({ last_error: null, maintenance: false });
    });

    it('deploys a node to active and undeploys it through cleaning back to available', async () => {
      await retryBusy(() => driver.setProvisionState(gpu, 'active'));
      expect((await inState(gpu, 'active')).last_error).toBeNull();
      seen = [];
      await retryBusy(() => driver.setProvisionState(gpu, 'deleted'));
      const node = await inState(gpu, 'available');
      expect(seen[0]).toMatch(/^(deleting|cleaning|clean wait|available)$/);
      if (fx.seesEveryState) expect(seen).toEqual(expect.arrayContaining(['deleting', 'cleaning']));
      expect(node.last_error).toBeNull();
    });

    it('rebuilds an active node back to active', async () => {
      await retryBusy(() => driver.setProvisionState(gpu, 'active'));
      await inState(gpu, 'active');
      await retryBusy(() => driver.setProvisionState(gpu, 'rebuild'));
      expect(await inState(gpu, 'active')).toMatchObject({ last_error: null });
    });

    it('a failed cleaning ends in clean failed with last_error, and manage recovers the node', async () => {
      await retryBusy(() => driver.setProvisionState(store, 'manage'));
      await inState(store, 'manageable');
      await retryBusy(() => fx.startFailingCleaning(store));
      const failed = await settle(store, (n) => n.provision_state === 'clean failed', 'clean failed');
      expect(failed.last_error).toEqual(expect.any(String));
      expect(failed.last_error?.length).toBeGreaterThan(0);
      const troubled = (await driver.listTroubledNodes()).map((n) => n.uuid);
      expect(troubled).toContain(store);
      expect(troubled).not.toContain(gpu);
      await retryBusy(() => driver.setProvisionState(store, 'manage'));
      await inState(store, 'manageable');
    });

    it('refuses a verb the current state does not allow with InvalidStateError, changing nothing', async () => {
      for (const verb of ['provide', 'deleted', 'rebuild', 'abort'] as const) {
        await expect(driver.setProvisionState(gpu, verb), verb).rejects.toBeInstanceOf(InvalidStateError);
      }
      await retryBusy(() => driver.setProvisionState(gpu, 'manage'));
      await inState(gpu, 'manageable');
      await expect(driver.setProvisionState(gpu, 'active')).rejects.toBeInstanceOf(InvalidStateError);
      expect(await driver.getNode(gpu)).toMatchObject({ provision_state: 'manageable', last_error: null });
    });

    it('refuses changes with NodeBusyError while an operation holds the node, and accepts them after', async () => {
      await retryBusy(() => driver.setPowerState(gpu, 'power on'));
      // Each attempt is harmless if a fast backend has already finished and accepts it.
      const attempts = [
        () => driver.updateNode(gpu, { lessee: 'bio-lab' }),
        () => driver.setPowerState(gpu, 'power on'),
        () => driver.setBootDevice(gpu, 'pxe'),
        () => driver.setConsoleEnabled(gpu, true),
        () => driver.setProvisionState(gpu, 'manage'),
      ];
      for (const attempt of attempts) {
        const outcome = await attempt().then(
          () => 'accepted',
          (err: unknown) => err,
        );
        // What a driver must never do is fail in another way (or, when strict, accept while locked).
        if (outcome !== 'accepted' || fx.strict) expect(outcome).toBeInstanceOf(NodeBusyError);
        if (outcome === 'accepted') break;
      }
      await inPower(gpu, 'power on');
      expect(await retryBusy(() => driver.updateNode(gpu, { lessee: 'bio-lab' }))).toMatchObject({ lessee: 'bio-lab' });
    });

    it('never returns driver_info or BMC credentials from any call', async () => {
      expectNoSecret(await driver.listNodes());
      for (const id of Object.values(fx.ids)) {
        expectNoSecret(await driver.getNode(id));
        expectNoSecret(await driver.getConsole(id));
        expectNoSecret(await driver.getBootDevice(id));
      }
      expectNoSecret(await retryBusy(() => driver.updateNode(gpu, { extra: { k: 'v' } })));
      await retryBusy(() => driver.setProvisionState(gpu, 'active'));
      await inState(gpu, 'active');
      expectNoSecret(await driver.listNodes());
    });
  });
}
