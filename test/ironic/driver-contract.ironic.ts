/**
 * The HardwareDriver contract suite on the `ironic` driver against a real standalone Ironic (fake-hardware,
 * http_basic auth), started by test/support/ironic.ts: `npm run test:ironic`.
 *
 * One Ironic serves the whole file; each contract test enrols fresh nodes (named as CONTRACT_NODES say) and
 * deletes them afterwards (maintenance first, so a node in any state can go).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { BackendUnavailableError } from '../../src/domain/errors.js';
import { IronicDriver } from '../../src/drivers/ironic/ironic-driver.js';
import { createLogger } from '../../src/logger.js';
import { CONTRACT_BMC_PASSWORD, describeDriverContract } from '../drivers/driver-contract.js';
import { ironicAvailable, startIronic } from '../support/ironic.js';
import type { IronicHandle } from '../support/ironic.js';

const avail = ironicAvailable();
const logger = createLogger('silent');

describe.skipIf(!avail.ok)('ironic driver against a real Ironic', () => {
  let ironic: IronicHandle;

  beforeAll(async () => {
    ironic = await startIronic({ auth: 'http_basic' });
  });
  afterAll(async () => {
    await ironic?.stop();
  });

  const driverFor = (auth = ironic.auth) =>
    new IronicDriver({
      url: ironic.url,
      auth: auth ? { type: 'http_basic', username: auth.user, password: auth.password } : { type: 'none' },
      clock: systemClock,
      logger,
      retry: { attempts: 6, baseMs: 25, maxMs: 400 },
    });

  describeDriverContract('ironic (real Ironic, fake-hardware)', async (nodes) => {
    const uuids = await ironic.enroll(
      nodes.map((spec) => ({
        name: spec.name,
        resource_class: spec.resource_class,
        properties: { ...spec.properties },
        traits: [...spec.traits],
        ...(spec.owner === null ? {} : { owner: spec.owner }),
        driver_info: { ...spec.driver_info },
      })),
    );
    const ids = Object.fromEntries(nodes.map((spec, i) => [spec.name, uuids[i] ?? '']));
    const driver = driverFor();
    return {
      driver,
      ids,
      settleTimeoutMs: 30_000,
      async startFailingCleaning(id) {
        // fake-hardware has no such step: the conductor fails the cleaning (clean failed, last_error set).
        await driver.setProvisionState(id, 'clean', { cleanSteps: [{ interface: 'deploy', step: 'leasehold_no_such_step' }] });
      },
      async close() {
        await driver.close();
        for (const id of uuids) {
          await ironic.request('PUT', `/v1/nodes/${id}/states/console`, { enabled: false }, { expect: [202, 400, 404] });
          await ironic.request('PUT', `/v1/nodes/${id}/maintenance`, { reason: 'contract test cleanup' }, { expect: [202, 404] });
          await ironic.request('DELETE', `/v1/nodes/${id}`, undefined, { expect: [204, 404] });
        }
      },
    };
  });

  it('negotiates a microversion of at least 1.65 and never sends BMC secrets back', async () => {
    const driver = driverFor();
    const [id] = await ironic.enroll([
      { name: 'ironic-driver-extra-1', properties: { cpus: 1 }, driver_info: { ipmi_password: CONTRACT_BMC_PASSWORD } },
    ]);
    try {
      expect(Number((await driver.microversion()).split('.')[1])).toBeGreaterThanOrEqual(65);
      const node = await driver.updateNode(id ?? '', { lessee: 'bio-lab', extra: { lease: 'l-1' } });
      expect(node).toMatchObject({ lessee: 'bio-lab', extra: { lease: 'l-1' } });
      expect(JSON.stringify([node, await driver.listNodes()])).not.toContain('driver_info');
    } finally {
      await driver.close();
      await ironic.request('DELETE', `/v1/nodes/${id}`, undefined, { expect: [204, 404] });
    }
  });

  it('is BackendUnavailableError with wrong credentials', async () => {
    const driver = driverFor({ user: 'leasehold', password: 'wrong' });
    try {
      await expect(driver.ping()).rejects.toBeInstanceOf(BackendUnavailableError);
    } finally {
      await driver.close();
    }
  });
});
