import type { MiddlewareHandler } from 'hono';
import type { EntryDeps } from '../access/entry-deps.js';
import { ConflictError } from '../domain/errors.js';
import type { AppEnv } from './context.js';

/**
 * Leasehold's own users and tokens exist only under LEASEHOLD_IDENTITY=local: under Keystone, people, projects,
 * roles and credentials are Keystone's, and asking Leasehold to manage them is a 409 saying so.
 */
export function localIdentityOnly(deps: Pick<EntryDeps, 'identity'>, what: string): MiddlewareHandler<AppEnv> {
  return async (_c, next) => {
    if (deps.identity.kind === 'keystone') throw managedByKeystone(what);
    await next();
  };
}

export function managedByKeystone(what: string): ConflictError {
  return new ConflictError(
    `identity is managed by Keystone: ${what} are Keystone's (openstack user / role / application credential); ` +
      'Leasehold keeps only projects\' quotas and history',
    { details: { identity: 'keystone' } },
  );
}
