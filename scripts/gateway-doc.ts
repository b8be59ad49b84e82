/**
 * Writes the RBAC deviations table (test/ironic/rbac-deviations.ts) into docs/gateway.md, between its markers.
 * Run after changing the table: `npx tsx scripts/gateway-doc.ts`. test/unit/gateway-doc.test.ts fails while stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deviationsMarkdown, DOC_END, DOC_START } from '../test/ironic/rbac-deviations.js';

export const GATEWAY_DOC = fileURLToPath(new URL('../docs/gateway.md', import.meta.url));

/** The doc with its generated part replaced by the table as it is now. */
export function withCurrentTable(doc: string): string {
  const start = doc.indexOf(DOC_START);
  const end = doc.indexOf(DOC_END);
  if (start < 0 || end < start) throw new Error(`${GATEWAY_DOC} lacks the markers ${DOC_START} … ${DOC_END}`);
  return doc.slice(0, start) + deviationsMarkdown() + doc.slice(end + DOC_END.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(GATEWAY_DOC, withCurrentTable(readFileSync(GATEWAY_DOC, 'utf8')));
  console.log(`wrote ${GATEWAY_DOC}`);
}
