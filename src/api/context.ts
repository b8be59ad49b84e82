import { OpenAPIHono } from '@hono/zod-openapi';
import type { EntryDeps } from '../access/entry-deps.js';
import type { Principal } from '../domain/identity.js';
import type { Logger } from '../logger.js';
import { validationError } from './error-response.js';

/** What the REST API's handlers are given: the entry points' ports (src/access/entry-deps.ts). */
export type ApiDeps = EntryDeps;

export interface AppEnv {
  Variables: {
    principal: Principal;
    requestId: string;
    log: Logger;
  };
}

/** Every router shares one validation hook, so a bad request gets the same error shape everywhere. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, _c) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });
}
