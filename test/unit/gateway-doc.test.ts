import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GATEWAY_DOC, withCurrentTable } from '../../scripts/gateway-doc.js';
import { DEVIATIONS } from '../ironic/rbac-deviations.js';

describe('docs/gateway.md', () => {
  it("lists every deliberate deviation from Ironic's RBAC matrix that the replay holds the gateway to", () => {
    const doc = readFileSync(GATEWAY_DOC, 'utf8');
    expect(doc, 'stale: run npx tsx scripts/gateway-doc.ts').toBe(withCurrentTable(doc));
    for (const name of Object.keys(DEVIATIONS)) expect(doc).toContain(`\`${name}\``);
  });
});
