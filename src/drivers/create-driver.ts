import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError } from '../domain/errors.js';
import type { Metrics } from '../domain/metrics.js';
import type { Logger } from '../logger.js';
import type { HardwareDriver } from './hardware-driver.js';
import type { IronicAuth } from './ironic/ironic-client.js';
import type { TokenSource } from './token-source.js';
import { IronicDriver } from './ironic/ironic-driver.js';
import { demoInventory } from './simulated/demo-inventory.js';
import { parseInventory } from './simulated/parse-inventory.js';
import { parseTimings } from './simulated/parse-timings.js';
import { SimulatedDriver } from './simulated/simulated-driver.js';
import type { SimulatedNetworks } from './simulated/simulated-networks.js';

/** Builds the configured hardware driver. Bad driver configuration fails the start with a clear message. */
export function createDriver(
  config: Config,
  deps: {
    readonly clock: Clock;
    readonly logger: Logger;
    /** Ironic's URL when it came from Keystone's catalog (IRONIC_URL unset). */
    readonly ironicUrl?: string;
    /** Leasehold's Keystone tokens, for IRONIC_AUTH_TYPE=keystone. */
    readonly keystoneTokens?: TokenSource;
    /** The simulated networks the simulated nodes' NICs are cabled to (LEASEHOLD_NETWORKS). */
    readonly networks?: SimulatedNetworks;
    /** Where Ironic requests are reported (the ironic driver). */
    readonly metrics?: Metrics;
  },
): HardwareDriver {
  switch (config.driver) {
    case 'simulated': {
      const nodes = config.simulatedNodesJson ? parseInventory(config.simulatedNodesJson) : demoInventory();
      const timings = config.simulatedTimingsJson ? parseTimings(config.simulatedTimingsJson) : {};
      deps.logger.info(
        { nodes: nodes.length, inventory: config.simulatedNodesJson ? 'LEASEHOLD_SIMULATED_NODES' : 'demo' },
        'simulated hardware driver',
      );
      return new SimulatedDriver({ nodes, timings, clock: deps.clock, networks: deps.networks });
    }
    case 'ironic': {
      const ironic = config.ironic;
      if (!ironic) {
        throw new InvalidRequestError('IRONIC_URL is required with LEASEHOLD_DRIVER=ironic', { details: { variable: 'IRONIC_URL' } });
      }
      const url = ironic.url ?? deps.ironicUrl;
      if (!url) throw new InvalidRequestError('IRONIC_URL is required (or IRONIC_AUTH_TYPE=keystone and a baremetal endpoint in the catalog)', { details: { variable: 'IRONIC_URL' } });
      let auth: IronicAuth;
      if (ironic.auth.type === 'keystone') {
        if (!deps.keystoneTokens) throw new InvalidRequestError('IRONIC_AUTH_TYPE=keystone needs KEYSTONE_URL and credentials', { details: { variable: 'IRONIC_AUTH_TYPE' } });
        auth = { type: 'keystone', tokens: deps.keystoneTokens };
      } else auth = ironic.auth;
      // The URL and auth type only: credentials never reach the logs.
      deps.logger.info({ url, auth: ironic.auth.type, timeoutMs: ironic.timeoutMs }, 'ironic hardware driver');
      return new IronicDriver({ url, auth, timeoutMs: ironic.timeoutMs, clock: deps.clock, logger: deps.logger, metrics: deps.metrics });
    }
  }
}
