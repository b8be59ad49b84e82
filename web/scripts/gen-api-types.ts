// npm run gen:api — writes web/src/api/schema.d.ts from the OpenAPI document of the in-process app.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { SCHEMA_FILE, generateApiTypes } from './api-types.js';

const text = await generateApiTypes();
await writeFile(SCHEMA_FILE, text);
process.stdout.write(`wrote ${fileURLToPath(SCHEMA_FILE)} (${text.length} bytes)\n`);
