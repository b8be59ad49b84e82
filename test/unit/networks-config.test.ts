import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/domain/clock.js';
import { InvalidRequestError } from '../../src/domain/errors.js';
import type { KeystoneSession } from '../../src/keystone/keystone-session.js';
import { createLogger } from '../../src/logger.js';
import { openNetworks } from '../../src/server/open-networks.js';

const KEYSTONE = { KEYSTONE_URL: 'http://keystone:5000/v3', KEYSTONE_USERNAME: 'leasehold', KEYSTONE_PASSWORD: 'pw' };
const IRONIC = { LEASEHOLD_DRIVER: 'ironic', IRONIC_AUTH_TYPE: 'keystone', ...KEYSTONE };
const logger = createLogger('silent');

/** A Keystone session whose catalog has (or lacks) a `network` endpoint. */
function session(network: string | null): KeystoneSession {
  return {
    endpoint: async (type: string) => {
      if (type === 'network' && network) return network;
      throw new InvalidRequestError(`Keystone's catalog has no internal endpoint of service type "${type}"`);
    },
    token: async () => 'service-token',
    invalidate: () => undefined,
  } as unknown as KeystoneSession;
}

describe('tenant networks configuration', () => {
  it('is automatic by default, and refuses a mode it does not know or simulated networks with a real Ironic', () => {
    expect(loadConfig({}).networks).toEqual({ mode: 'auto', neutronUrl: null });
    expect(() => loadConfig({ LEASEHOLD_NETWORKS: 'nova' })).toThrow(/LEASEHOLD_NETWORKS must be "auto", "neutron", "simulated" or "off"/);
    expect(() => loadConfig({ ...IRONIC, LEASEHOLD_NETWORKS: 'simulated' })).toThrow(/simulated needs LEASEHOLD_DRIVER=simulated/);
    expect(() => loadConfig({ ...IRONIC, NEUTRON_URL: 'ftp://neutron' })).toThrow(/NEUTRON_URL must be http\(s\)/);
  });

  it('needs Keystone for Neutron, and says so', () => {
    expect(() => loadConfig({ LEASEHOLD_DRIVER: 'ironic', IRONIC_URL: 'http://ironic:6385', LEASEHOLD_NETWORKS: 'neutron' })).toThrow(/KEYSTONE_URL .*Neutron/);
    expect(loadConfig({ ...IRONIC, NEUTRON_URL: 'http://neutron:9696/' }).networks.neutronUrl).toBe('http://neutron:9696/');
  });

  it('the demo gets simulated networks; off is off; auto with Ironic takes Neutron from the catalog, or goes without and says why', async () => {
    const deps = { keystone: null, clock: systemClock, logger };
    expect((await openNetworks(loadConfig({}), deps)).backend?.kind).toBe('simulated');
    const off = await openNetworks(loadConfig({ LEASEHOLD_NETWORKS: 'off' }), deps);
    expect(off).toEqual({ backend: null, why: 'tenant networks are turned off here (LEASEHOLD_NETWORKS=off)' });

    const found = await openNetworks(loadConfig(IRONIC), { ...deps, keystone: session('http://neutron:9696') });
    expect(found.backend?.kind).toBe('neutron');
    const without = await openNetworks(loadConfig(IRONIC), { ...deps, keystone: session(null) });
    expect(without.backend).toBeNull();
    expect('why' in without && without.why).toMatch(/not configured here: set NEUTRON_URL \(or register Neutron as the `network` service/);
  });

  it('LEASEHOLD_NETWORKS=neutron without a Neutron to find stops the start saying what to set', async () => {
    const config = loadConfig({ ...IRONIC, LEASEHOLD_NETWORKS: 'neutron' });
    await expect(openNetworks(config, { keystone: session(null), clock: systemClock, logger })).rejects.toThrow(/catalog has no internal endpoint of service type "network"/);
    const url = loadConfig({ ...IRONIC, LEASEHOLD_NETWORKS: 'neutron', NEUTRON_URL: 'http://neutron:9696' });
    expect((await openNetworks(url, { keystone: session(null), clock: systemClock, logger })).backend?.kind).toBe('neutron');
  });
});
