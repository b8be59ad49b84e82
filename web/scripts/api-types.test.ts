// @vitest-environment node
import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { SCHEMA_FILE, generateApiTypes } from './api-types.js';

// The UI's and the CLI's API types are generated from the server's OpenAPI document and committed; when a route
// changes and nobody regenerates them, they would compile against an API that no longer exists.
test('src/api/openapi-types.d.ts matches the API (run `npm run gen:api` when this fails)', async () => {
  const committed = await readFile(SCHEMA_FILE, 'utf8');
  const current = await generateApiTypes();
  expect(committed === current, 'src/api/openapi-types.d.ts is out of date: run `npm run gen:api` and commit it').toBe(true);
});
