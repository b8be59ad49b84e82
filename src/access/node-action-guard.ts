import { NotFoundError } from '../domain/errors.js';
import type { Principal } from '../domain/identity.js';
import type { PolicySubject } from '../domain/policy-rules/rule-expression.js';
import type { AccessGuard } from '../drivers/hardware-driver.js';
import type { EntryDeps } from './entry-deps.js';
import { nodeForCaller, type NodeInView } from './node-access.js';

export interface NodeActionRule {
  /** Whether the caller, related to the node as `subject` says, may do the action (the node policy's rule). */
  readonly allows: (subject: PolicySubject) => boolean;
  /** The error the route answers when it may not (a 403 naming the rule, or the 404 of a read). */
  readonly refusal: () => Error;
}

/**
 * The AccessGuard a hardware call made on a caller's behalf carries (drivers/hardware-driver.ts): "may this caller
 * still do this to this node now?", asked by the driver before every attempt. The decision that admitted the
 * request (`found`, taken from the lease table moments before) admits the first attempt unless its deadline has
 * passed meanwhile; every later attempt decides again from the store at that instant — a lease that ended, was
 * shortened or cancelled while Ironic answered "locked" refuses it with the same 404 as any request after the end
 * (`ident` is the node as the caller named it, so the message is the one it would get anyway).
 *
 * The deadline is the end of the lease when the action is allowed only through the lease (a lessee's power-on);
 * an owner's or the operator's call has none, whatever lease is running.
 */
export function nodeActionGuard(deps: EntryDeps, principal: Principal, ident: string, found: NodeInView, rule: NodeActionRule): AccessGuard {
  let deadline = deadlineOf(found, rule);
  let decided = true; // `found` is a decision from the store, taken for this request
  return {
    get deadline() {
      return deadline;
    },
    async admit() {
      if (!decided) {
        let again: NodeInView;
        try {
          again = await nodeForCaller(deps, principal, found.node.id);
        } catch (err) {
          throw err instanceof NotFoundError ? new NotFoundError('node', ident) : err;
        }
        if (!rule.allows(again.subject)) throw rule.refusal();
        deadline = deadlineOf(again, rule);
      }
      decided = false;
      // The store decided at the instant it read the clock; the time spent since counts too.
      if (deadline !== null && deps.clock.now().getTime() >= deadline.getTime()) throw new NotFoundError('node', ident);
    },
  };
}

/** The lease's end when only the lease grants the action; null when the caller's access does not end with it. */
function deadlineOf(found: NodeInView, rule: NodeActionRule): Date | null {
  if (!found.subject.is_node_lessee || found.lease === null) return null;
  return rule.allows({ ...found.subject, is_node_lessee: false }) ? null : found.lease.end;
}
