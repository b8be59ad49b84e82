import { ForbiddenError, NotConfiguredError, NotFoundError } from '../domain/errors.js';
import { localUserId, type Principal } from '../domain/identity.js';
import type { NodeRuleName } from '../domain/policy-rules/default-rules.js';
import type { NetworkActor, NetworkService } from '../networking/network-service.js';
import type { EntryDeps } from './entry-deps.js';
import { nodeActionGuard } from './node-action-guard.js';
import type { NodeInView } from './node-access.js';

/** The network service, or the 409 not_configured saying what to configure. */
export function requireNetworks(deps: Pick<EntryDeps, 'networks' | 'networksOff'>): NetworkService {
  if (deps.networks) return deps.networks;
  throw new NotConfiguredError(deps.networksOff ?? 'tenant networks are not configured here', { details: { feature: 'networks' } });
}

/**
 * The caller as the network service sees it, once the node policy's VIF rule (`rule`) allowed it on the node found
 * from the lease table at this instant — refused with a 404 for a read (the node's networks are the node's), a 403
 * naming the rule for a change. The guard goes with every Ironic call made for it: nothing a lessee sends reaches
 * Ironic after its lease ended.
 */
export function networkActor(deps: EntryDeps, principal: Principal, ident: string, found: NodeInView, rule: NodeRuleName): NetworkActor {
  const refusal = () =>
    rule === 'baremetal:node:vif:list'
      ? new NotFoundError('node', ident)
      : new ForbiddenError(`the policy (${rule}) does not allow you to change this node's networks: readers cannot; a member can`);
  const decision = { allows: (subject: NodeInView['subject']) => deps.policy.allows(rule, subject), refusal };
  if (!decision.allows(found.subject)) throw refusal();
  return {
    node_id: found.node.id,
    project_id: principal.projectId,
    admin: found.access === 'admin',
    owner: found.access === 'owner',
    lease_id: found.access === 'lessee' ? (found.lease?.lease_id ?? null) : null,
    user_name: principal.userName,
    user_id: localUserId(principal),
    guard: nodeActionGuard(deps, principal, ident, found, decision),
  };
}
