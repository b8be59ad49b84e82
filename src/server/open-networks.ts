import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError, isLeaseholdError } from '../domain/errors.js';
import type { NetworkBackend } from '../drivers/network-backend.js';
import { NeutronBackend } from '../drivers/neutron/neutron-backend.js';
import { SimulatedNetworks } from '../drivers/simulated/simulated-networks.js';
import type { KeystoneSession } from '../keystone/keystone-session.js';
import type { Logger } from '../logger.js';

/** The network backend, or why there is none (the network endpoints answer it as 409 not_configured). */
export type OpenedNetworks = { readonly backend: NetworkBackend } | { readonly backend: null; readonly why: string };

const HOW =
  'set NEUTRON_URL (or register Neutron as the `network` service in Keystone\'s catalog) with Leasehold\'s Keystone service credentials (KEYSTONE_*); the demo\'s simulated driver has simulated networks';

/**
 * Chooses the network backend (LEASEHOLD_NETWORKS): the demo's simulated networks beside the simulated driver, or
 * Neutron — at NEUTRON_URL or the `network` endpoint of Keystone's catalog — called with Leasehold's service token.
 * `neutron` without a Neutron to find stops the start saying what to set; `auto` then goes without networks.
 */
export async function openNetworks(config: Config, deps: { readonly keystone: KeystoneSession | null; readonly clock: Clock; readonly logger: Logger }): Promise<OpenedNetworks> {
  const { mode, neutronUrl } = config.networks;
  if (mode === 'off') return { backend: null, why: 'tenant networks are turned off here (LEASEHOLD_NETWORKS=off)' };
  if (mode === 'simulated' || (mode === 'auto' && config.driver === 'simulated')) {
    deps.logger.info('tenant networks: simulated (the demo\'s networks beside the simulated driver)');
    return { backend: new SimulatedNetworks({ demo: true }) };
  }
  let url = neutronUrl;
  if (url === null && deps.keystone && config.keystone) {
    try {
      url = await deps.keystone.endpoint('network', config.keystone.interface, config.keystone.region);
    } catch (err) {
      if (!isLeaseholdError(err) || mode === 'neutron') throw err;
    }
  }
  if (url === null || !deps.keystone) {
    if (mode === 'neutron') throw new InvalidRequestError(`LEASEHOLD_NETWORKS=neutron, but no Neutron was found: ${HOW}`, { details: { variable: 'NEUTRON_URL' } });
    deps.logger.info('tenant networks: off (no Neutron configured)');
    return { backend: null, why: `tenant networks are not configured here: ${HOW}` };
  }
  const backend = new NeutronBackend({ url, tokens: deps.keystone, clock: deps.clock, logger: deps.logger });
  deps.logger.info({ url: backend.url }, 'tenant networks: Neutron');
  return { backend };
}
