import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { createApp } from '../../src/api/app.js';
import type { ApiDeps } from '../../src/api/context.js';
import { createLogger } from '../../src/logger.js';

/** The API's contract as TypeScript types, for its clients: the web UI and the CLI compile against the API as served. */
export const SCHEMA_FILE = new URL('../../src/api/openapi-types.d.ts', import.meta.url);

/**
 * The OpenAPI document exactly as the server serves it. The routes only touch their dependencies while handling
 * a request, so building the app needs no store or driver: /openapi.json is produced from the route definitions.
 */
export async function fetchOpenApiDocument(): Promise<Record<string, unknown>> {
  const deps = { logger: createLogger('silent') } as unknown as ApiDeps;
  const res = await createApp(deps).request('/openapi.json');
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The text of the generated types for the current API (deterministic, so a test can compare it). */
export async function generateApiTypes(): Promise<string> {
  const doc = await fetchOpenApiDocument();
  const ast = await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0], { alphabetize: false });
  const header = `${COMMENT_HEADER}// Generated from the server's /openapi.json by \`npm run gen:api\` (web/scripts/gen-api-types.ts).\n\n`;
  return header + astToString(ast);
}
