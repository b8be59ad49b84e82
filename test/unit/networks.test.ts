import { describe, expect, it } from 'vitest';
import { bindingOf, networkVisibleTo, normalizeMac, pickNic, vifsToRemove, type Nic } from '../../src/domain/networks.js';

const nic = (id: string, mac: string, vif: string | null = null, physnet: string | null = 'physnet1', node = 'n1'): Nic => ({ id, node_id: node, mac, physical_network: physnet, vif });

describe('tenant network rules', () => {
  it("a project may use its own networks, shared ones and those shared with it (or with everyone), never another's", () => {
    const base = { project_id: 'b', shared: false, shared_with: [] as string[] };
    expect(networkVisibleTo({ ...base, project_id: 'a' }, 'a')).toBe(true);
    expect(networkVisibleTo(base, 'a')).toBe(false);
    expect(networkVisibleTo({ ...base, shared: true }, 'a')).toBe(true);
    expect(networkVisibleTo({ ...base, shared_with: ['a'] }, 'a')).toBe(true);
    expect(networkVisibleTo({ ...base, shared_with: ['*'] }, 'a')).toBe(true);
    expect(networkVisibleTo({ ...base, shared_with: ['c'] }, 'a')).toBe(false);
  });

  it('a new attachment takes the NIC named by MAC, else the first free one on the network’s physnet, and says why not', () => {
    const nics = [nic('p1', '52:54:00:00:00:01', 'vif'), nic('p2', '52:54:00:00:00:02', null, 'physnet2'), nic('p3', '52:54:00:00:00:03')];
    expect(pickNic(nics, { physical_network: 'physnet1' }, null)).toEqual({ nic: nics[2] });
    expect(pickNic(nics, { physical_network: 'physnet2' }, null)).toEqual({ nic: nics[1] });
    expect(pickNic(nics, { physical_network: null }, null)).toEqual({ nic: nics[1] });
    expect(pickNic(nics, { physical_network: 'physnet1' }, '52:54:00:00:00:02')).toEqual({ nic: nics[1] });
    expect(pickNic(nics, { physical_network: 'physnet1' }, '52:54:00:00:00:01')).toEqual({ refusal: 'nic_in_use' });
    expect(pickNic(nics, { physical_network: 'physnet1' }, 'aa:bb:cc:dd:ee:ff')).toEqual({ refusal: 'no_such_mac' });
    expect(pickNic(nics.slice(0, 2), { physical_network: 'physnet9' }, null)).toEqual({ refusal: 'no_free_nic' });
  });

  it("only the owner's and the current holders' VIFs stay on a node; a VIF whose port is gone goes too", () => {
    const nics = [nic('p1', 'm1', 'owner-port'), nic('p2', 'm2', 'lessee-port'), nic('p3', 'm3', 'stranger-port'), nic('p4', 'm4', 'gone'), nic('p5', 'm5')];
    const ports = new Map([
      ['owner-port', { project_id: 'owner' }],
      ['lessee-port', { project_id: 'lessee' }],
      ['stranger-port', { project_id: 'stranger' }],
    ]);
    const during = vifsToRemove(nics, ports, () => ['owner', 'lessee']);
    expect(during.map((v) => [v.vif, v.reason])).toEqual([
      ['stranger-port', 'not_holders'],
      ['gone', 'port_gone'],
    ]);
    const after = vifsToRemove(nics, ports, () => ['owner']);
    expect(after.map((v) => v.vif)).toEqual(['lessee-port', 'stranger-port', 'gone']);
  });

  it('MAC addresses are read in the usual spellings and written as Neutron writes them', () => {
    expect(normalizeMac('52:54:00:AB:cd:01')).toBe('52:54:00:ab:cd:01');
    expect(normalizeMac('52-54-00-ab-cd-01')).toBe('52:54:00:ab:cd:01');
    expect(normalizeMac('5254.00ab.cd01')).toBe('52:54:00:ab:cd:01');
    expect(normalizeMac('52:54:00:ab:cd')).toBeNull();
    expect(normalizeMac('zz:54:00:ab:cd:01')).toBeNull();
  });

  it("a port's binding reads bound, unbound or failed from Neutron's vif_type", () => {
    expect(bindingOf({ vif_type: 'other', status: 'ACTIVE' })).toBe('bound');
    expect(bindingOf({ vif_type: 'unbound', status: 'DOWN' })).toBe('unbound');
    expect(bindingOf({ vif_type: null, status: 'DOWN' })).toBe('unbound');
    expect(bindingOf({ vif_type: 'binding_failed', status: 'DOWN' })).toBe('failed');
  });
});
