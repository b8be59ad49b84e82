import { InvalidRequestError, NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Principal, User } from '../domain/identity.js';
import { canSeeUser } from '../domain/policy.js';
import type { Store } from '../store/store.js';
import { isIdOrName } from './schemas.js';

/**
 * Refuses (400) a key that cannot name anything — a control character such as NUL, a lone surrogate, over 255
 * characters — before it reaches SQL, where PostgreSQL fails on it (a 500 in issue 11). For keys that come from
 * outside the request schemas: the /baremetal gateway's node ident.
 */
export function checkIdOrName(value: string, resource: string): void {
  if (!isIdOrName(value)) {
    throw new InvalidRequestError(`${JSON.stringify(value.slice(0, 300))} cannot be a ${resource} uuid or name`, {
      details: { field: resource, resource },
    });
  }
}

/** A user the caller may see, or 404 (no leak that it exists). */
export async function visibleUser(store: Store, principal: Principal, id: string): Promise<User> {
  const user = isUuid(id) ? await store.getUser(id) : null;
  if (!user || !canSeeUser(principal, user)) throw new NotFoundError('user', id);
  return user;
}
