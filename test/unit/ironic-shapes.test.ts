import { describe, expect, it } from 'vitest';
import { patchRule } from '../../src/gateway/ironic-shapes.js';

describe("the rule each field of a node PATCH needs (Ironic's, field by field)", () => {
  it('names the owner, lessee, driver and instance fields by their own rules, and everything else by update', () => {
    expect(patchRule({ path: '/owner' })).toBe('baremetal:node:update:owner');
    expect(patchRule({ path: '/lessee' })).toBe('baremetal:node:update:lessee');
    expect(patchRule({ path: '/driver_info/ipmi_password' })).toBe('baremetal:node:update:driver_info');
    expect(patchRule({ path: '/deploy_interface' })).toBe('baremetal:node:update:driver_interfaces');
    expect(patchRule({ path: '/instance_info/image_source' })).toBe('baremetal:node:update_instance_info');
    expect(patchRule({ path: '/instance_uuid' })).toBe('baremetal:node:update:instance_uuid');
    expect(patchRule({ path: '/shard' })).toBe('baremetal:node:update:shard');
    expect(patchRule({ path: '/protected' })).toBe('baremetal:node:update');
    expect(patchRule({ path: '/description' })).toBe('baremetal:node:update');
  });

  it('asks the disable_cleaning rule only of a PATCH that turns automated cleaning off', () => {
    expect(patchRule({ path: '/automated_clean', value: false })).toBe('baremetal:node:disable_cleaning');
    expect(patchRule({ path: '/automated_clean', value: true })).toBe('baremetal:node:update');
  });
});
