import { describe } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { availabilityContract } from './contract/availability-contract.js';
import { consoleContract } from './contract/console-contract.js';
import { engineBatchContract } from './contract/engine-batch-contract.js';
import { engineContract } from './contract/engine-contract.js';
import { leaseListContract } from './contract/lease-list-contract.js';
import { lifecycleContract } from './contract/lifecycle-contract.js';
import { lookupContract } from './contract/lookup-contract.js';
import { nodesContract } from './contract/nodes-contract.js';
import { noticesContract } from './contract/notices-contract.js';
import { offersContract } from './contract/offers-contract.js';
import { planningContract } from './contract/planning-contract.js';
import { projectsContract } from './contract/projects-users-contract.js';
import { statsContract } from './contract/stats-contract.js';
import { subleaseContract } from './contract/sublease-contract.js';
import { tokensContract } from './contract/tokens-contract.js';
import { usageContract } from './contract/usage-contract.js';

/**
 * The Store contract: what every engine must do, run by store.pglite.test.ts and store.postgres.test.ts.
 * `openFreshStore` returns a migrated store over an empty database; the suite closes each one after its test.
 */
export function defineStoreContract(engine: string, openFreshStore: () => Promise<Store>): void {
  describe(`Store contract on ${engine}`, () => {
    projectsContract(openFreshStore);
    tokensContract(openFreshStore);
    nodesContract(openFreshStore);
    engineContract(openFreshStore);
    engineBatchContract(openFreshStore);
    consoleContract(openFreshStore);
    availabilityContract(openFreshStore);
    planningContract(openFreshStore);
    leaseListContract(openFreshStore);
    lifecycleContract(openFreshStore);
    statsContract(openFreshStore);
    usageContract(openFreshStore);
    noticesContract(openFreshStore);
    subleaseContract(openFreshStore);
    lookupContract(openFreshStore);
    offersContract(openFreshStore);
  });
}
