import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError } from '../domain/errors.js';
import type { Logger } from '../logger.js';
import type { HardwareDriver } from './hardware-driver.js';
import { IronicDriver } from './ironic/ironic-driver.js';
import { demoInventory } from './simulated/demo-inventory.js';
import { parseInventory } from './simulated/parse-inventory.js';
import { parseTimings } from './simulated/parse-timings.js';
import { SimulatedDriver } from './simulated/simulated-driver.js';

/** Builds the configured hardware driver. Bad driver configuration fails the start with a clear message. */
export function createDriver(config: Config, deps: { readonly clock: Clock; readonly logger: Logger }): HardwareDriver {
  switch (config.driver) {
    case 'simulated': {
      const nodes = config.simulatedNodesJson ? parseInventory(config.simulatedNodesJson) : demoInventory();
      const timings = config.simulatedTimingsJson ? parseTimings(config.simulatedTimingsJson) : {};
      deps.logger.info(
        { nodes: nodes.length, inventory: config.simulatedNodesJson ? 'LEASEHOLD_SIMULATED_NODES' : 'demo' },
        'simulated hardware driver',
      );
      return new SimulatedDriver({ nodes, timings, clock: deps.clock });
    }
    case 'ironic': {
      const ironic = config.ironic;
      if (!ironic) {
        throw new InvalidRequestError('IRONIC_URL is required with LEASEHOLD_DRIVER=ironic', { details: { variable: 'IRONIC_URL' } });
      }
      // The URL and auth type only: credentials never reach the logs.
      deps.logger.info({ url: ironic.url, auth: ironic.auth.type, timeoutMs: ironic.timeoutMs }, 'ironic hardware driver');
      return new IronicDriver({ url: ironic.url, auth: ironic.auth, timeoutMs: ironic.timeoutMs, clock: deps.clock, logger: deps.logger });
    }
  }
}
