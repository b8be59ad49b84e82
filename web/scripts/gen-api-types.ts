// npm run gen:api — writes src/api/openapi-types.d.ts (the web UI's and the CLI's API types) from the OpenAPI
// document of the in-process app.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { SCHEMA_FILE, generateApiTypes } from './api-types.js';

const text = await generateApiTypes();
await writeFile(SCHEMA_FILE, text);
process.stdout.write(`wrote ${fileURLToPath(SCHEMA_FILE)} (${text.length} bytes)\n`);
