import { SimulatedNetworks } from '../../src/drivers/simulated/simulated-networks.js';
import { networkContract } from './network-contract.js';

networkContract('simulated', async () => {
  const backend = new SimulatedNetworks();
  return {
    backend,
    projects: { a: 'project-a', b: 'project-b' },
    async makeNetwork(spec) {
      return backend.createNetwork({ name: spec.name, project_id: spec.project, shared: spec.shared, shared_with: spec.sharedWith });
    },
    close: () => backend.close(),
  };
});
