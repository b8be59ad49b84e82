import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Network } from '../../src/domain/networks.js';
import type { NetworkBackend } from '../../src/drivers/network-backend.js';

/**
 * The NetworkBackend contract: what Leasehold relies on from Neutron, checked against every implementation — the
 * simulated networks (test/drivers/simulated-networks.test.ts) and a real Neutron (test/neutron/). A fixture makes
 * the networks the way its backend's operator would (Neutron's API as an admin; the simulated service's
 * createNetwork).
 */
export interface NetworkContractFixture {
  readonly backend: NetworkBackend;
  /** Two projects, as the backend knows them (Keystone project ids for Neutron). */
  readonly projects: { readonly a: string; readonly b: string };
  /** A VLAN network owned by `project`; `sharedWith`: RBAC access_as_shared to those projects; `shared`: everyone. */
  makeNetwork(spec: { readonly name: string; readonly project: string; readonly shared?: boolean; readonly sharedWith?: readonly string[] }): Promise<Network>;
  close(): Promise<void>;
}

export function networkContract(name: string, setup: () => Promise<NetworkContractFixture>, options: { readonly skip?: string | false } = {}): void {
  describe.skipIf(Boolean(options.skip))(`NetworkBackend contract: ${name}`, () => {
    let f: NetworkContractFixture;
    const nets = {} as Record<'own' | 'theirs' | 'shared' | 'granted', Network>;
    const suffix = Math.random().toString(36).slice(2, 8);

    beforeAll(async () => {
      f = await setup();
      nets.own = await f.makeNetwork({ name: `own-${suffix}`, project: f.projects.a });
      nets.theirs = await f.makeNetwork({ name: `theirs-${suffix}`, project: f.projects.b });
      nets.shared = await f.makeNetwork({ name: `shared-${suffix}`, project: f.projects.b, shared: true });
      nets.granted = await f.makeNetwork({ name: `granted-${suffix}`, project: f.projects.b, sharedWith: [f.projects.a] });
    }, 300_000);
    afterAll(async () => {
      await f?.close();
    });

    it('answers a ping', async () => {
      await f.backend.ping();
    });

    it("lists a project's own networks, the shared ones and those shared with it, never another project's", async () => {
      const ids = (await f.backend.listNetworks(f.projects.a)).map((n) => n.id);
      expect(ids).toEqual(expect.arrayContaining([nets.own.id, nets.shared.id, nets.granted.id]));
      expect(ids).not.toContain(nets.theirs.id);
      const all = (await f.backend.listNetworks(null)).map((n) => n.id);
      expect(all).toEqual(expect.arrayContaining(Object.values(nets).map((n) => n.id)));
    });

    it('describes a network with its owner, its sharing and its VLAN segment', async () => {
      const own = await f.backend.getNetwork(nets.own.id);
      expect(own).toMatchObject({ id: nets.own.id, name: `own-${suffix}`, project_id: f.projects.a, shared: false, network_type: 'vlan' });
      expect(typeof own!.segmentation_id).toBe('number');
      expect(own!.physical_network).toBeTruthy();
      expect((await f.backend.getNetwork(nets.shared.id))!.shared).toBe(true);
      expect((await f.backend.getNetwork(nets.granted.id))!.shared_with).toContain(f.projects.a);
      expect(await f.backend.getNetwork('5c1f0000-0000-4000-8000-000000000000')).toBeNull();
      expect((await f.backend.networksNamed(`own-${suffix}`)).map((n) => n.id)).toEqual([nets.own.id]);
      expect(await f.backend.networksNamed(`nothing-${suffix}`)).toEqual([]);
    });

    it("creates a port in a project's name on a network it may use, finds it alone or in a batch, deletes it once and again", async () => {
      const port = await f.backend.createPort({ network_id: nets.granted.id, project_id: f.projects.a, name: `p-${suffix}` });
      expect(port).toMatchObject({ network_id: nets.granted.id, project_id: f.projects.a, name: `p-${suffix}`, trunk_id: null });
      expect(port.mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
      expect(await f.backend.getPort(port.id)).toMatchObject({ id: port.id, project_id: f.projects.a });
      const missing = '5c1f0000-0000-4000-8000-000000000001';
      const batch = await f.backend.getPorts([port.id, missing]);
      expect([...batch.keys()]).toEqual([port.id]);
      expect((await f.backend.portWithMac(nets.granted.id, port.mac!))?.id).toBe(port.id);
      expect(await f.backend.portWithMac(nets.own.id, port.mac!)).toBeNull();
      await f.backend.deletePort(port.id);
      expect(await f.backend.getPort(port.id)).toBeNull();
      await f.backend.deletePort(port.id); // already gone: fine
    });

    it('a port on a network that does not exist is refused with a 4xx error in the backend\'s words', async () => {
      await expect(f.backend.createPort({ network_id: '5c1f0000-0000-4000-8000-000000000002', project_id: f.projects.a, name: 'x' })).rejects.toMatchObject({
        code: expect.stringMatching(/invalid_request|conflict/),
      });
    });

    it('makes trunks with VLAN subports, adds and removes subports (idempotently) and deletes them', async () => {
      if (!(await f.backend.supportsTrunks())) return;
      const parent = await f.backend.createPort({ network_id: nets.own.id, project_id: f.projects.a, name: `parent-${suffix}` });
      const sub1 = await f.backend.createPort({ network_id: nets.granted.id, project_id: f.projects.a, name: `sub1-${suffix}` });
      const sub2 = await f.backend.createPort({ network_id: nets.shared.id, project_id: f.projects.a, name: `sub2-${suffix}` });
      const vlan = (await f.backend.getNetwork(nets.granted.id))!.segmentation_id!;
      const trunk = await f.backend.createTrunk({ project_id: f.projects.a, name: `t-${suffix}`, parent_port_id: parent.id, subports: [{ port_id: sub1.id, segmentation_type: 'vlan', segmentation_id: vlan }] });
      expect(trunk).toMatchObject({ parent_port_id: parent.id, subports: [{ port_id: sub1.id, segmentation_id: vlan }] });
      expect((await f.backend.getPort(parent.id))!.trunk_id).toBe(trunk.id);
      const more = await f.backend.addSubports(trunk.id, [{ port_id: sub2.id, segmentation_type: 'vlan', segmentation_id: 3999 }]);
      expect(more.subports.map((s) => s.port_id).sort()).toEqual([sub1.id, sub2.id].sort());
      const fewer = await f.backend.removeSubports(trunk.id, [sub1.id]);
      expect(fewer.subports.map((s) => s.port_id)).toEqual([sub2.id]);
      expect((await f.backend.removeSubports(trunk.id, [sub1.id])).subports).toHaveLength(1);
      await f.backend.deleteTrunk(trunk.id);
      expect(await f.backend.getTrunk(trunk.id)).toBeNull();
      await f.backend.deleteTrunk(trunk.id);
      for (const p of [parent, sub1, sub2]) await f.backend.deletePort(p.id);
    });
  });
}
