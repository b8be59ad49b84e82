import { nodeForCaller, type NodeInView } from '../api/node-access.js';
import type { ApiDeps } from '../api/context.js';
import { ForbiddenError } from '../domain/errors.js';
import type { Principal } from '../domain/identity.js';

export interface ConsoleAccess extends NodeInView {
  /** Whether the caller may also turn the console on (Ironic's set_console_state) when it is off. */
  readonly mayEnable: boolean;
}

/**
 * Whether `principal` may use the serial console of a node right now: the node access of the REST API (the lease
 * table at this instant; anything unseen is a NotFoundError) and the node policy's `baremetal:node:get_console`.
 * The console route asks it when it issues a token; the proxy asks it again when a connection opens and every
 * second while it is open, so all three decide the same way.
 */
export async function consoleAccess(deps: ApiDeps, principal: Principal, nodeIdOrName: string): Promise<ConsoleAccess> {
  const view = await nodeForCaller(deps, principal, nodeIdOrName);
  if (!deps.policy.allows('baremetal:node:get_console', view.subject)) {
    throw new ForbiddenError(
      'the policy (baremetal:node:get_console) does not allow you to use the serial console: readers cannot; a member can',
    );
  }
  return { ...view, mayEnable: deps.policy.allows('baremetal:node:set_console_state', view.subject) };
}
