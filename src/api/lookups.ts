import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Principal, User } from '../domain/identity.js';
import { canSeeUser } from '../domain/policy.js';
import type { Store } from '../store/store.js';

/** A user the caller may see, or 404 (no leak that it exists). */
export async function visibleUser(store: Store, principal: Principal, id: string): Promise<User> {
  const user = isUuid(id) ? await store.getUser(id) : null;
  if (!user || !canSeeUser(principal, user)) throw new NotFoundError('user', id);
  return user;
}
