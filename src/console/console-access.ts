import { nodeForCaller, type NodeInView } from '../access/node-access.js';
import type { EntryDeps } from '../access/entry-deps.js';
import { ForbiddenError } from '../domain/errors.js';
import type { Principal } from '../domain/identity.js';
import { nodeAccess, nodeSubject, type NodeAccess } from '../domain/policy.js';
import type { NodePolicy } from '../domain/policy-rules/node-policy.js';
import type { PolicySubject } from '../domain/policy-rules/rule-expression.js';
import type { ConsoleAccessState } from '../store/console-store.js';
import type { CurrentLease } from '../store/leasing-store.js';

export interface ConsoleAccess extends NodeInView {
  /** Whether the caller may also turn the console on (Ironic's set_console_state) when it is off. */
  readonly mayEnable: boolean;
}

/** How a console's user stands with its node at one instant: what an open connection follows. */
export interface ConsoleStanding {
  readonly access: NodeAccess;
  readonly subject: PolicySubject;
  /** The lease granting access to the node now (whoever holds it), or null. */
  readonly lease: CurrentLease | null;
  readonly ownerProjectId: string | null;
}

/**
 * Whether `principal` may use the serial console of a node right now: the node access of the REST API (the lease
 * table at this instant; anything unseen is a NotFoundError) and the node policy's `baremetal:node:get_console`.
 * The console route asks it when it issues a token and the proxy when a connection opens; open connections are
 * re-checked with `consoleStanding`, the same decision on what one batched query read (console-watch.ts).
 */
export async function consoleAccess(deps: EntryDeps, principal: Principal, nodeIdOrName: string): Promise<ConsoleAccess> {
  const view = await nodeForCaller(deps, principal, nodeIdOrName);
  if (!deps.policy.allows('baremetal:node:get_console', view.subject)) {
    throw new ForbiddenError(
      'the policy (baremetal:node:get_console) does not allow you to use the serial console: readers cannot; a member can',
    );
  }
  return { ...view, mayEnable: deps.policy.allows('baremetal:node:set_console_state', view.subject) };
}

/**
 * consoleAccess's decision on a state the store read for many connections at once (ConsoleStore.accessStates):
 * the same policy functions (domain/policy.ts) on the same facts — the token's user as it is now, the node's
 * owning project, the lease granting access now. Null when the user may not use the console now (a removed
 * node, no relation to it, or the policy says no); a revoked token is the caller's to check first.
 */
export function consoleStanding(policy: NodePolicy, state: ConsoleAccessState): ConsoleStanding | null {
  if (state.node === null) return null;
  const { principal } = state.grant;
  const node = { owner_project: state.node.owner_project_id === null ? null : { id: state.node.owner_project_id } };
  const leasedByCaller = state.lease !== null && state.lease.project_id === principal.projectId;
  const access = nodeAccess(principal, node, leasedByCaller);
  if (access === null) return null;
  const subject = nodeSubject(principal, node, leasedByCaller);
  if (!policy.allows('baremetal:node:get_console', subject)) return null;
  return { access, subject, lease: state.lease, ownerProjectId: state.node.owner_project_id };
}
