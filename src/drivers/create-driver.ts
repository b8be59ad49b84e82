import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { InvalidRequestError } from '../domain/errors.js';
import type { Logger } from '../logger.js';
import type { HardwareDriver } from './hardware-driver.js';
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
    case 'ironic':
      throw new InvalidRequestError(
        'LEASEHOLD_DRIVER=ironic: the Ironic driver is not part of this build yet; use LEASEHOLD_DRIVER=simulated',
        { details: { variable: 'LEASEHOLD_DRIVER' } },
      );
  }
}
