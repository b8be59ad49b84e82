import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Role } from '../../src/domain/identity.js';
import { NodePolicy } from '../../src/domain/policy-rules/node-policy.js';
import { parseRule, type PolicySubject } from '../../src/domain/policy-rules/rule-expression.js';
import { loadKeystoneRoles, loadPolicy } from '../../src/server/load-policy.js';

const who = (over: Partial<PolicySubject> & { role?: Role } = {}): PolicySubject => ({
  is_admin: false,
  is_node_owner: false,
  is_node_lessee: false,
  role: 'member',
  ...over,
});
const admin = who({ is_admin: true, role: 'admin' });
const ownerMember = who({ is_node_owner: true });
const ownerReader = who({ is_node_owner: true, role: 'reader' });
const lesseeMember = who({ is_node_lessee: true });
const lesseeReader = who({ is_node_lessee: true, role: 'reader' });
const thirdParty = who({ role: 'manager' });

describe('the default node policy', () => {
  const policy = NodePolicy.defaults();

  it('lets the operator, the owner and the lessee of the moment see a node, and nobody else', () => {
    expect([admin, ownerReader, lesseeReader, thirdParty].map((s) => policy.allows('baremetal:node:get', s))).toEqual([true, true, true, false]);
  });

  it('lets members of the owner and of the lessee project power, deploy and use the console; readers cannot', () => {
    for (const rule of ['baremetal:node:set_power_state', 'baremetal:node:set_provision_state', 'baremetal:node:set_console_state'] as const) {
      expect([admin, ownerMember, lesseeMember, ownerReader, lesseeReader, thirdParty].map((s) => policy.allows(rule, s))).toEqual([true, true, true, false, false, false]);
    }
  });

  it("keeps the owner's side of the boot device, traits and driver interfaces to its managers, as Ironic does; the lessee member drives the boot device", () => {
    const ownerManager = who({ is_node_owner: true, role: 'manager' });
    for (const rule of ['baremetal:node:set_boot_device', 'baremetal:node:get_boot_device'] as const) {
      expect([admin, ownerManager, ownerMember, lesseeMember, lesseeReader].map((s) => policy.allows(rule, s))).toEqual([true, true, false, true, false]);
    }
    for (const rule of ['baremetal:node:traits:set', 'baremetal:node:update:driver_interfaces', 'baremetal:node:inject_nmi'] as const) {
      expect([admin, ownerManager, ownerMember, lesseeMember].map((s) => policy.allows(rule, s))).toEqual([true, true, false, false]);
    }
  });

  it('lets no lessee do what would stop the wipe at the end of its lease, and nobody but the operator turn cleaning off', () => {
    const lesseeManager = who({ is_node_lessee: true, role: 'manager' });
    for (const rule of ['baremetal:node:set_maintenance', 'baremetal:node:clear_maintenance', 'baremetal:node:update'] as const) {
      expect([ownerMember, lesseeMember, lesseeManager].map((s) => policy.allows(rule, s))).toEqual([true, false, false]);
    }
    expect([admin, ownerMember].map((s) => policy.allows('baremetal:node:disable_cleaning', s))).toEqual([true, false]);
  });

  it('shows node history and inventory to the owner only; BIOS settings and ports to the lessee too', () => {
    expect([ownerReader, lesseeMember].map((s) => policy.allows('baremetal:node:history:get', s))).toEqual([true, false]);
    expect([ownerReader, lesseeMember].map((s) => policy.allows('baremetal:node:inventory:get', s))).toEqual([true, false]);
    expect([ownerReader, lesseeReader, thirdParty].map((s) => policy.allows('baremetal:node:ports:list', s))).toEqual([true, true, false]);
  });

  it('never lets a lessee change the owner, the lessee, driver_info or properties, and shows it no secrets', () => {
    for (const rule of ['baremetal:node:update:owner', 'baremetal:node:update:lessee', 'baremetal:node:update:driver_info', 'baremetal:node:update:properties', 'baremetal:node:get:driver_info', 'baremetal:node:get:last_error'] as const) {
      expect(policy.allows(rule, lesseeMember)).toBe(false);
    }
    expect(policy.allows('baremetal:node:update_instance_info', lesseeMember)).toBe(true);
  });

  it('keeps owner and lessee changes to the operator, even for the owner', () => {
    expect(policy.allows('baremetal:node:update:owner', ownerMember)).toBe(false);
    expect(policy.allows('baremetal:node:update:lessee', ownerMember)).toBe(false);
    expect(policy.allows('baremetal:node:update:name', ownerMember)).toBe(true);
  });
});

describe('operator policy overrides', () => {
  it('replace a default, and may refer to the building blocks', () => {
    const policy = NodePolicy.withOverrides({ 'baremetal:node:set_power_state': 'is_admin or rule:is_owner_member' });
    expect(policy.allows('baremetal:node:set_power_state', lesseeMember)).toBe(false);
    expect(policy.allows('baremetal:node:set_power_state', ownerMember)).toBe(true);
  });

  it('read roles as "at least": role:member holds for a manager, not for a reader', () => {
    const policy = NodePolicy.withOverrides({ 'baremetal:node:get': 'role:member and (is_node_owner or is_node_lessee)' });
    expect(policy.allows('baremetal:node:get', who({ is_node_owner: true, role: 'manager' }))).toBe(true);
    expect(policy.allows('baremetal:node:get', ownerReader)).toBe(false);
    expect(policy.allows('baremetal:node:get', who({ is_node_lessee: true, role: 'member' }))).toBe(true);
  });

  it.each([
    [{ 'baremetal:node:set_power_state': 'is_admin or' }, /ends too early/],
    [{ 'baremetal:node:set_power_state': 'is_admin or is_root' }, /unknown check "is_root"/],
    [{ 'baremetal:node:set_power_state': 'role:owner' }, /unknown role "owner"/],
    [{ 'baremetal:node:set_powerstate': 'is_admin' }, /unknown rule "baremetal:node:set_powerstate"/],
    [{ 'baremetal:node:get': 'rule:nowhere' }, /refers to rule:nowhere, which is not defined/],
    [{ a: 'rule:b', b: 'rule:a' }, /cycle: a → b → a/],
    [{ 'baremetal:node:get': 42 }, /must be a check string/],
    [{ 'baremetal:node:get': '(is_admin' }, /expected "\)"/],
  ])('refuse a mistake with a message that names it: %j', (overrides, message) => {
    expect(() => NodePolicy.withOverrides(overrides as Record<string, unknown>)).toThrow(message);
  });

  it('parse "@", "!", "not" and an empty check (allow all) as oslo.policy does', () => {
    expect(parseRule('', 'x')).toEqual({ kind: 'always' });
    expect(parseRule('not is_admin and !', 'x')).toEqual({ kind: 'and', exprs: [{ kind: 'not', expr: { kind: 'fact', fact: 'is_admin' } }, { kind: 'never' }] });
  });
});

describe('the policy file', () => {
  it('is YAML in the style of Ironic policy.yaml; a mistake names the file and the rule', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-policy-'));
    const good = join(dir, 'good.yaml');
    await writeFile(good, '# only owners power\n"baremetal:node:set_power_state": "is_admin or is_node_owner"\n');
    expect((await loadPolicy(good)).allows('baremetal:node:set_power_state', lesseeMember)).toBe(false);
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, '"baremetal:node:set_power_state": "is_admin or or"\n');
    await expect(loadPolicy(bad)).rejects.toThrow(/bad\.yaml.*baremetal:node:set_power_state.*position/);
    await writeFile(bad, '- a list\n');
    await expect(loadPolicy(bad)).rejects.toThrow(/must be a mapping/);
    await expect(loadPolicy(join(dir, 'missing.yaml'))).rejects.toThrow(/missing\.yaml: cannot be read \(ENOENT\)/);
  });

  it("maps other Keystone role names onto Leasehold's in keystone_roles, beside the node rules; a wrong entry names itself", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-policy-'));
    const file = join(dir, 'cloud.yaml');
    await writeFile(file, 'keystone_roles:\n  manager: [manager, project-admin]\n  reader: observer\n"baremetal:node:set_power_state": "is_admin or is_node_owner"\n');
    expect(await loadKeystoneRoles(file)).toEqual({ reader: ['observer'], member: ['member'], manager: ['manager', 'project-admin'], admin: ['admin'] });
    expect((await loadPolicy(file)).allows('baremetal:node:set_power_state', lesseeMember)).toBe(false);
    expect(await loadKeystoneRoles(null)).toEqual({ reader: ['reader'], member: ['member'], manager: ['manager'], admin: ['admin'] });
    await writeFile(file, 'keystone_roles:\n  owner: [admin]\n');
    await expect(loadKeystoneRoles(file)).rejects.toThrow(/keystone_roles: "owner" is not a Leasehold role/);
    await writeFile(file, 'keystone_roles:\n  member: []\n');
    await expect(loadKeystoneRoles(file)).rejects.toThrow(/keystone_roles\.member must be a Keystone role name/);
  });
});
