import { afterAll, describe, expect, it } from 'vitest';
import { NodeBusyError } from '../../src/domain/errors.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import type { SimulatedNodeSpec, SimulatedTimings } from '../../src/drivers/simulated/simulated-driver.js';
import type { SimulatedHardwareStore } from '../../src/domain/simulated-hardware-store.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { POSTGRES_SKIP_REASON, TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';

const A = 'c0000000-0000-4000-8000-00000000000a';
const B = 'c0000000-0000-4000-8000-00000000000b';
const NODES: SimulatedNodeSpec[] = [
  { uuid: A, name: 'sim-a', owner: 'physics-lab', properties: { memory_mb: 8192, cpus: 4, local_gb: 100, cpu_arch: 'x86_64' } },
  { uuid: B, name: 'sim-b', owner: 'bio-lab', provision_state: 'manageable', properties: { memory_mb: 8192, cpus: 4, local_gb: 100, cpu_arch: 'x86_64' } },
];
const TIMINGS: Partial<SimulatedTimings> = { powerMs: 1_000, cleanMs: 10_000, consoleMs: 500, bootOutputMs: 0 };

/** A driver instance (a replica, or the same process after a restart) keeping its hardware in `hardware`. */
async function instance(store: Store, clock: ManualClock, hardware: SimulatedHardwareStore = store.simulatedHardware): Promise<SimulatedDriver> {
  const driver = new SimulatedDriver({ nodes: NODES, clock, timings: TIMINGS });
  await driver.share(hardware);
  return driver;
}

/** Lets queued writes finish, then reads what others wrote (both run on the database, not on the manual clock). */
async function settle(driver: SimulatedDriver): Promise<void> {
  await driver.flush();
  await driver.listNodes();
}

/** The store, but each write waits until `writers` writes are waiting: actions truly at the same moment. */
function atOnce(hardware: SimulatedHardwareStore, writers: number): (h: SimulatedHardwareStore) => SimulatedHardwareStore {
  let waiting = 0;
  let release: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => ({
    changes: (w) => hardware.changes(w),
    enrol: (nodes, now) => hardware.enrol(nodes, now),
    remove: (uuid) => hardware.remove(uuid),
    async save(uuid, state, version, now) {
      if (++waiting >= writers) release();
      await all;
      return hardware.save(uuid, state, version, now);
    },
  });
}

function sharedHardwareSuite(name: string, open: () => Promise<Store>) {
  describe(`simulated hardware kept in the store (${name})`, () => {
    it('a restart finds the machines as they were left: power, provision state, marks, maintenance, boot device, VIFs', async () => {
      const store = await open();
      const clock = new ManualClock('2030-01-01T00:00:00Z');
      const first = await instance(store, clock);
      await first.setPowerState(A, 'power on');
      await clock.advance(1_000);
      await first.updateNode(A, { lessee: 'astro', extra: { leasehold_lease: 'l-1' } });
      await first.setBootDevice(A, 'pxe', true);
      await first.attachVif(A, 'vif-1');
      first.setMaintenance(B, true, 'fan');
      await settle(first);
      const before = await first.getNode(A);
      await first.close();

      const second = await instance(store, clock);
      const after = await second.getNode(A);
      expect(after).toMatchObject({ power_state: 'power on', lessee: 'astro', extra: { leasehold_lease: 'l-1' }, reservation: null });
      expect(after.updated_at).toBe(before.updated_at);
      expect(await second.getBootDevice(A)).toEqual({ boot_device: 'pxe', persistent: true });
      expect((await second.listVifNics()).map((n) => [n.node_id, n.vif])).toEqual([[A, 'vif-1']]);
      expect(await second.getNode(B)).toMatchObject({ provision_state: 'manageable', maintenance: true, maintenance_reason: 'fan' });
      await second.close();
      await store.close();
    });

    it('a change through one instance is what the other instance sees next', async () => {
      const store = await open();
      const clock = new ManualClock('2030-01-01T00:00:00Z');
      const [one, two] = [await instance(store, clock), await instance(store, clock)];
      await one.setPowerState(A, 'power on');
      expect(await two.getNode(A)).toMatchObject({ power_state: 'power off', target_power_state: 'power on', reservation: 'simulated' });
      await clock.advance(1_000);
      await one.flush();
      expect(await two.getNode(A)).toMatchObject({ power_state: 'power on', target_power_state: null, reservation: null });
      await two.updateNode(A, { lessee: 'geo' });
      expect((await one.getNode(A)).lessee).toBe('geo');
      await Promise.all([one.close(), two.close()]);
      await store.close();
    });

    it('two instances acting on one node at the same moment: one wins, the other is told the node is busy', async () => {
      const store = await open();
      const clock = new ManualClock('2030-01-01T00:00:00Z');
      const sameMoment = atOnce(store.simulatedHardware, 2);
      const [one, two] = [await instance(store, clock, sameMoment(store.simulatedHardware)), await instance(store, clock, sameMoment(store.simulatedHardware))];
      const results = await Promise.allSettled([one.updateNode(A, { lessee: 'astro' }), two.updateNode(A, { lessee: 'geo' })]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]!.reason).toBeInstanceOf(NodeBusyError);
      const winner = (won[0] as PromiseFulfilledResult<{ lessee: string | null }>).value.lessee;
      expect((await one.getNode(A)).lessee).toBe(winner);
      expect((await two.getNode(A)).lessee).toBe(winner);
      await Promise.all([one.close(), two.close()]);
      await store.close();
    });

    it('cleaning started by an instance that stopped is finished by the next one once it is overdue', async () => {
      const store = await open();
      const clock = new ManualClock('2030-01-01T00:00:00Z');
      const first = await instance(store, clock);
      await first.setProvisionState(B, 'provide');
      expect((await first.getNode(B)).provision_state).toBe('cleaning');
      await first.close(); // stops mid-cleaning: its timers are gone

      const second = await instance(store, clock);
      const third = await instance(store, clock);
      expect((await second.getNode(B)).provision_state).toBe('cleaning');
      // The whole cleaning (10 s) plus the take-over grace of each stage, on the second and third instances' clock.
      for (let i = 0; i < 20; i++) {
        await clock.advance(1_000);
        await settle(second);
        await settle(third);
      }
      expect(await second.getNode(B)).toMatchObject({ provision_state: 'available', target_provision_state: null, reservation: null, power_state: 'power off' });
      expect((await third.getNode(B)).provision_state).toBe('available');
      await Promise.all([second.close(), third.close()]);
      await store.close();
    });
  });
}

sharedHardwareSuite('PGlite', () => openStore({ dataDir: 'memory://' }));

const dbs = testDatabases(undefined, 'leasehold_simhw');
afterAll(() => dbs.dropAll());
if (TEST_DATABASE_URL) sharedHardwareSuite('PostgreSQL', async () => openStore({ databaseUrl: (await dbs.create()).url, dataDir: 'memory://' }));
else describe.skip(`simulated hardware kept in PostgreSQL: ${POSTGRES_SKIP_REASON}`, () => {});
