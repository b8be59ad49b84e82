import { describe, expect, it } from 'vitest';
import { checkExpression, knownFacts } from '../../src/domain/expression/check.js';
import { evaluate, type Subject } from '../../src/domain/expression/evaluate.js';
import { parseExpression } from '../../src/domain/expression/parser.js';
import { FailureKind, equivalentRequirement, failureFindings, nodeFailure, type HeldForCheck, type NodeHealth } from '../../src/domain/replacement.js';

const GiB = 2 ** 30;
const healthy: NodeHealth = { name: 'gpu-3', maintenance: false, maintenance_reason: null, power_state: 'power on', provision_state: 'active', last_error: null, quarantined: false };

describe('when a node has failed for its lease', () => {
  it('a healthy node serves, powered on or off, deployed or not', () => {
    expect(nodeFailure(healthy)).toBeNull();
    expect(nodeFailure({ ...healthy, power_state: 'power off', provision_state: 'available' })).toBeNull();
  });

  it('maintenance set by its owner or the operator is a failure, with the reason they gave', () => {
    expect(nodeFailure({ ...healthy, maintenance: true, maintenance_reason: 'fan failure' })).toEqual({
      kind: FailureKind.Maintenance,
      reason: 'node gpu-3 went into maintenance in Ironic (fan failure)',
    });
    expect(nodeFailure({ ...healthy, maintenance: true })!.reason).toContain('(no reason given)');
  });

  it('a power state Ironic cannot tell is a failure, except for a node still being enrolled', () => {
    expect(nodeFailure({ ...healthy, power_state: null, last_error: 'IPMI timed out' })).toEqual({
      kind: FailureKind.PowerFailure,
      reason: 'Ironic cannot tell the power state of node gpu-3 (IPMI timed out)',
    });
    expect(nodeFailure({ ...healthy, power_state: null, provision_state: 'enroll' })).toBeNull();
  });

  it("error and clean failed are failures; a lessee's own deploy failing is not", () => {
    expect(nodeFailure({ ...healthy, provision_state: 'error', last_error: 'boom' })).toMatchObject({ kind: FailureKind.ProvisionError, reason: 'node gpu-3 is in provision state "error" (boom)' });
    expect(nodeFailure({ ...healthy, provision_state: 'clean failed' })!.kind).toBe(FailureKind.ProvisionError);
    expect(nodeFailure({ ...healthy, provision_state: 'deploy failed' })).toBeNull();
  });

  it('a node quarantined after a failed cleaning is a failure; maintenance is named first when both hold', () => {
    expect(nodeFailure({ ...healthy, quarantined: true })!.kind).toBe(FailureKind.Quarantined);
    expect(nodeFailure({ ...healthy, quarantined: true, maintenance: true })!.kind).toBe(FailureKind.Maintenance);
  });
});

describe('what an equivalent of a named node is', () => {
  const named = { memory: 64 * GiB, disk: 480 * 10 ** 9, cpus: 32, gpus: 1, cpu_arch: 'x86_64', resource_class: 'gpu', serial: 'SN-1', fast: true };
  const requirement = equivalentRequirement(named, ['CUSTOM_A100']);
  const check = (s: Subject) => {
    const expr = parseExpression(requirement);
    checkExpression(requirement, expr, knownFacts([named, s.facts]));
    return evaluate(expr, s);
  };

  it('is a valid expression with sizes in bytes, the same architecture, class and flags, every trait, and no serial', () => {
    expect(requirement).toBe(`cpu_arch == "x86_64" and cpus >= 32 and disk >= ${480 * 10 ** 9}B and fast == true and gpus >= 1 and memory >= ${64 * GiB}B and resource_class == "gpu" and has CUSTOM_A100`);
    expect(requirement).not.toContain('SN-1');
  });

  it('a twin with another serial qualifies, and so does a bigger node; a smaller one, another architecture or a missing trait does not', () => {
    expect(check({ facts: { ...named, serial: 'SN-2' }, traits: ['CUSTOM_A100'] })).toBe(true);
    expect(check({ facts: { ...named, memory: 128 * GiB, gpus: 2 }, traits: ['CUSTOM_A100', 'CUSTOM_NVME'] })).toBe(true);
    expect(check({ facts: { ...named, memory: 32 * GiB }, traits: ['CUSTOM_A100'] })).toBe(false);
    expect(check({ facts: { ...named, cpu_arch: 'aarch64' }, traits: ['CUSTOM_A100'] })).toBe(false);
    expect(check({ facts: { ...named, cpus: 64 }, traits: [] })).toBe(false);
  });

  it('a node with no facts at all still gives an expression every node meets', () => {
    expect(equivalentRequirement({}, [])).toBe('cpus >= 0');
  });
});

describe('what the reconciler hands over, pass after pass', () => {
  const now = new Date('2030-01-01T12:00:00Z');
  const held = (over: Partial<HeldForCheck> = {}): HeldForCheck => ({
    allocation_id: 'a-1', lease_id: 'l-1', node_id: 'n-1', state: 'active', end: new Date('2030-01-02T00:00:00Z'), lease_cancelled: false, failure_kind: null, ...over,
  });
  const sick = { ...healthy, maintenance: true, maintenance_reason: 'disk' };

  it('a new failure once; the same kind again is not handed over a second time; another kind is', () => {
    expect(failureFindings([held()], () => sick, now)).toEqual([{ allocation_id: 'a-1', lease_id: 'l-1', node_id: 'n-1', failure: nodeFailure(sick) }]);
    expect(failureFindings([held({ failure_kind: 'maintenance' })], () => sick, now)).toEqual([]);
    expect(failureFindings([held({ failure_kind: 'maintenance' })], () => ({ ...healthy, provision_state: 'error' }), now)[0]!.failure!.kind).toBe('provision_error');
  });

  it('a node that serves again after a recorded failure is handed over as recovered (failure null)', () => {
    expect(failureFindings([held({ failure_kind: 'maintenance' })], () => healthy, now)).toEqual([{ allocation_id: 'a-1', lease_id: 'l-1', node_id: 'n-1', failure: null }]);
    expect(failureFindings([held()], () => healthy, now)).toEqual([]);
  });

  it('a node gone from Ironic has vanished; an upcoming (reserved) allocation counts too', () => {
    expect(failureFindings([held({ state: 'reserved' })], () => null, now)[0]!.failure).toEqual({ kind: FailureKind.Vanished, reason: 'node n-1 no longer exists in Ironic' });
  });

  it('a node that left, a cancelled lease, an allocation past its end or being released is not looked at', () => {
    for (const h of [held({ left: true }), held({ lease_cancelled: true }), held({ end: now }), held({ state: 'releasing' })]) {
      expect(failureFindings([h], () => sick, now)).toEqual([]);
    }
  });

  it('a quarantine is read from the allocation row (Leasehold keeps it, not Ironic)', () => {
    expect(failureFindings([held({ node_quarantined: true })], () => healthy, now)[0]!.failure!.kind).toBe(FailureKind.Quarantined);
  });
});
