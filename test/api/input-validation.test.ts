import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';
import { dbSnapshot } from '../fuzz/db-snapshot.js';

/**
 * Issue 11, defect 5: hostile input answered 500 (36 in one run). Each class — a NUL byte in names, descriptions,
 * ids and list filters; durations and times past every range; deeply nested or over-long expressions; over-long
 * names — is now a 400 in the one error shape, naming the field, and nothing is written.
 */

const NUL = 'a\u0000b';
const q = encodeURIComponent;
const DEEP = `${'('.repeat(3000)}cpus >= 1${')'.repeat(3000)}`;

let t: TestApp;
let member: string;
let leaseId: string;
let adminId: string;

beforeAll(async () => {
  t = await startTestApp();
  member = (await createProjectUser(t, 'physics-lab', 'member')).token;
  const lease = await t.request('POST', '/v1/leases', { token: member, body: { nodes: ['gpu-01'], duration: '1h' } });
  expect(lease.status).toBe(201);
  leaseId = lease.body.id;
  adminId = (await t.request('GET', '/v1/me')).body.user.id;
});
afterAll(() => t?.close());

/** Every field the error names: `details.field`, or each `details.issues[].field` of a schema failure. */
function fieldsOf(body: any): string[] {
  const details = body?.error?.details ?? {};
  return [details.field, ...(details.issues ?? []).map((i: { field: string }) => i.field)].filter((f) => typeof f === 'string');
}

interface Case {
  readonly method: string;
  /** `{lease}` stands for the id of a lease the member holds, `{admin}` for the operator's user id (also in bodies). */
  readonly path: string;
  readonly body?: unknown;
  readonly as?: 'admin' | 'member';
  /** The field the error must name: `body.name` matches `name`, `body.name` or `query.name`-style names ending so. */
  readonly field: string;
}

async function expectRefused(c: Case): Promise<any> {
  const before = await dbSnapshot(t.store);
  const resolve = (text: string) => text.replaceAll('{lease}', leaseId).replaceAll('{admin}', adminId);
  const body = c.body === undefined ? undefined : JSON.parse(resolve(JSON.stringify(c.body)));
  const res = await t.request(c.method, resolve(c.path), { body, token: c.as === 'member' ? member : undefined });
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.any(String), details: expect.any(Object) });
  const fields = fieldsOf(res.body);
  expect(
    fields.some((f) => f === c.field || f.endsWith(`.${c.field}`)),
    `details name ${c.field}: ${JSON.stringify(res.body.error.details)}`,
  ).toBe(true);
  expect(await dbSnapshot(t.store)).toEqual(before);
  return res.body;
}

describe('a NUL byte is a 400 naming the field, and nothing is written', () => {
  const cases: Case[] = [
    { method: 'POST', path: '/v1/projects', body: { name: 'chem-lab', description: NUL }, field: 'description' },
    { method: 'PATCH', path: '/v1/projects/physics-lab', body: { description: NUL }, field: 'description' },
    { method: 'POST', path: '/v1/users', body: { name: 'eve', project_id: NUL, role: 'member' }, field: 'project_id' },
    { method: 'POST', path: '/v1/tokens', body: { user_id: NUL }, field: 'user_id' },
    { method: 'POST', path: '/v1/offers', body: { node_id: NUL }, field: 'node_id' },
    { method: 'POST', path: '/v1/offers', body: { node_id: 'gpu-01', allowed_projects: [NUL] }, field: 'allowed_projects.0' },
    { method: 'POST', path: '/v1/leases', as: 'member', body: { name: NUL, nodes: ['gpu-02'], duration: '1h' }, field: 'name' },
    { method: 'POST', path: '/v1/leases/quote', as: 'member', body: { nodes: [NUL], duration: '1h' }, field: 'nodes.0' },
    { method: 'PATCH', path: '/v1/nodes/gpu-01', body: { owner: NUL }, field: 'owner' },
    { method: 'GET', path: `/v1/projects/${q(NUL)}`, field: 'id' },
    { method: 'GET', path: `/v1/nodes/${q(NUL)}`, field: 'id' },
    { method: 'PATCH', path: `/v1/nodes/${q(NUL)}`, body: { quarantined: false }, field: 'id' },
    { method: 'POST', path: `/v1/nodes/${q(NUL)}/power`, body: { action: 'on' }, field: 'id' },
    { method: 'POST', path: `/v1/nodes/${q(NUL)}/console`, field: 'id' },
    { method: 'DELETE', path: `/v1/leases/${q(NUL)}`, field: 'id' },
  ];
  it.each(cases)('$method $path: a 400 naming $field', async (c) => {
    await expectRefused(c);
  });

  const filters: ReadonlyArray<readonly [string, string]> = [
    ['/v1/projects', 'marker'],
    ['/v1/users', 'project_id'],
    ['/v1/users', 'marker'],
    ['/v1/tokens', 'user_id'],
    ['/v1/tokens', 'marker'],
    ['/v1/nodes', 'owner'],
    ['/v1/nodes', 'resource_class'],
    ['/v1/nodes', 'provision_state'],
    ['/v1/nodes', 'power_state'],
    ['/v1/nodes', 'marker'],
    ['/v1/nodes', 'where'],
    ['/v1/offers', 'node_id'],
    ['/v1/offers', 'owner'],
    ['/v1/offers', 'marker'],
    ['/v1/leases', 'project'],
    ['/v1/leases', 'node_id'],
    ['/v1/leases', 'owner'],
    ['/v1/leases', 'marker'],
    ['/v1/events', 'node_id'],
    ['/v1/events', 'lease_id'],
    ['/v1/events', 'project'],
    ['/v1/events', 'type'],
    ['/v1/events', 'marker'],
    ['/v1/availability', 'marker'],
    ['/v1/availability', 'where'],
  ];
  it.each(filters)('the list filter GET %s?%s=<NUL> is a 400 naming it', async (path, name) => {
    await expectRefused({ method: 'GET', path: `${path}?${name}=${q(NUL)}`, field: name });
  });
});

describe("the /baremetal gateway refuses a node ident with a NUL before looking it up, in Ironic's error shape", () => {
  it.each(['GET', 'PATCH'])('%s /baremetal/v1/nodes/<NUL>', async (method) => {
    const before = await dbSnapshot(t.store);
    const res = await t.request(method, `/baremetal/v1/nodes/${q(NUL)}`, {
      token: member,
      ...(method === 'PATCH' ? { body: [{ op: 'replace', path: '/extra/x', value: 1 }] } : {}),
    });
    expect(res.status).toBe(400);
    const fault = JSON.parse(res.body.error_message);
    // Refused by the check, not by PostgreSQL's error mapped afterwards (that one names a SQLSTATE).
    expect(fault.faultstring).toMatch(/cannot be a node uuid or name/);
    expect(await dbSnapshot(t.store)).toEqual(before);
  });
});

describe('durations and times past every sane range are a 400 naming the field, and nothing is written', () => {
  const cases: Case[] = [
    { method: 'POST', path: '/v1/offers', body: { node_id: 'gpu-02', max_lease_duration: '99999999999999999999d' }, field: 'max_lease_duration' },
    { method: 'POST', path: '/v1/offers', body: { node_id: 'gpu-02', min_lease_duration: '100000000d' }, field: 'min_lease_duration' },
    { method: 'POST', path: '/v1/offers', body: { node_id: 'gpu-02', end: '9999-12-31T00:00:00Z' }, field: 'end' },
    { method: 'POST', path: '/v1/offers', body: { node_id: 'gpu-02', start: '1900-01-01T00:00:00Z' }, field: 'start' },
    { method: 'POST', path: '/v1/leases', as: 'member', body: { nodes: ['gpu-02'], duration: 'P9999999999999D' }, field: 'duration' },
    { method: 'POST', path: '/v1/leases', as: 'member', body: { nodes: ['gpu-02'], duration: '999999999h' }, field: 'duration' },
    { method: 'POST', path: '/v1/leases/quote', as: 'member', body: { nodes: ['gpu-02'], duration: '100000000d' }, field: 'duration' },
    // 2030 is the test clock's now: 2041 is more than 10 years away, 9999 is absurd.
    { method: 'POST', path: '/v1/leases', as: 'member', body: { nodes: ['gpu-02'], start: '2041-01-01T00:00:00Z', duration: '1h' }, field: 'start' },
    { method: 'POST', path: '/v1/leases', as: 'member', body: { nodes: ['gpu-02'], start: '9999-12-31T00:00:00Z', duration: '1h' }, field: 'start' },
    { method: 'POST', path: '/v1/leases', as: 'member', body: { nodes: ['gpu-02'], end: '9999-12-31T23:59:59-23:59' }, field: 'end' },
    { method: 'PATCH', path: '/v1/leases/{lease}', as: 'member', body: { end: '2999-01-01T00:00:00Z' }, field: 'end' },
    { method: 'PATCH', path: '/v1/projects/physics-lab', body: { quota: { max_lease_duration: '99999999999999999999d' } }, field: 'max_lease_duration' },
    { method: 'PATCH', path: '/v1/projects/physics-lab', body: { quota: { max_nodes: Number.MAX_SAFE_INTEGER } }, field: 'max_nodes' },
    { method: 'POST', path: '/v1/tokens', body: { user_id: '{admin}', expires_at: '9999-12-31T00:00:00Z' }, field: 'expires_at' },
    { method: 'GET', path: '/v1/events?since=0001-01-01T00:00:00Z', field: 'since' },
    { method: 'GET', path: `/v1/availability?from=${q('9999-12-31T23:59:59-23:59')}`, field: 'from' },
    // A valid from whose default week would end in year 10000.
    { method: 'GET', path: `/v1/availability?from=${q('9999-12-31T00:00:00Z')}`, field: 'from' },
    { method: 'GET', path: '/v1/events?marker=99999999999999999999999', field: 'marker' },
  ];
  it.each(cases)('$method $path: a 400 naming $field', async (c) => {
    await expectRefused(c);
  });

  it('says what the longest duration is', async () => {
    const body = await expectRefused(cases[0]!);
    expect(body.error.message).toMatch(/P3653D|10 years/);
  });
});

describe('deeply nested and over-long expressions are a 400 naming the field and the position', () => {
  it.each(['/v1/nodes', '/v1/offers', '/v1/availability'])('%s?where= with 3,000 nested parentheses', async (path) => {
    const body = await expectRefused({ method: 'GET', path: `${path}?where=${q(DEEP.slice(2930, -2930))}`, field: 'where' });
    expect(body.error.message).toMatch(/position 65: .*nested deeper than 64/);
    expect(body.error.details.position).toBe(65);
  });

  it('a where= longer than 4,096 characters', async () => {
    await expectRefused({ method: 'GET', path: `/v1/nodes?where=${q(`cpus >= 1${' and cpus >= 1'.repeat(400)}`)}`, field: 'where' });
  });

  it('a lease group whose expression nests 3,000 levels', async () => {
    const res = await t.request('POST', '/v1/leases/quote', { token: member, body: { groups: [{ count: 1, where: DEEP }] } });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toContain('body.groups.0.where');
  });

  it('a lease group nested 65 levels within 4,096 characters names the position', async () => {
    const before = await dbSnapshot(t.store);
    const res = await t.request('POST', '/v1/leases', { token: member, body: { groups: [{ count: 1, where: DEEP.slice(2935, -2935) }], duration: '1h' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/position 65/);
    expect(await dbSnapshot(t.store)).toEqual(before);
  });
});

describe('over-long names and filters are a 400 naming the field', () => {
  const long = 'x'.repeat(256);
  const cases: Case[] = [
    { method: 'GET', path: `/v1/nodes?resource_class=${long}`, field: 'resource_class' },
    { method: 'GET', path: `/v1/nodes/${long}`, field: 'id' },
    { method: 'GET', path: `/v1/events?type=${long}`, field: 'type' },
    { method: 'POST', path: '/v1/leases', as: 'member', body: { name: 'n'.repeat(101), nodes: ['gpu-02'], duration: '1h' }, field: 'name' },
    { method: 'POST', path: '/v1/tokens', body: { user_id: long }, field: 'user_id' },
  ];
  it.each(cases)('$method $path: a 400 naming $field', async (c) => {
    await expectRefused(c);
  });

  it('a lone surrogate in a description is refused (it would be stored as U+FFFD)', async () => {
    await expectRefused({ method: 'POST', path: '/v1/projects', body: { name: 'chem-lab', description: 'x\ud800y' }, field: 'description' });
  });
});

describe('the bounds are in the OpenAPI document', () => {
  it('names, filters, durations and expressions show their limits', async () => {
    const doc = (await t.request('GET', '/openapi.json', { token: null })).body;
    const param = (path: string, name: string) =>
      doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name).schema;
    expect(param('/v1/nodes', 'resource_class')).toMatchObject({ maxLength: 255, pattern: expect.any(String) });
    // The published pattern works as a JSON Schema validator reads it (ECMA-262, with or without the u flag).
    for (const flags of ['', 'u']) {
      const pattern = new RegExp(param('/v1/nodes', 'resource_class').pattern, flags);
      expect([pattern.test('baremetal.gpu'), pattern.test('x\u{1F600}'), pattern.test(NUL), pattern.test('x\ud800')]).toEqual([true, true, false, false]);
    }
    expect(param('/v1/nodes', 'where')).toMatchObject({ maxLength: 4096 });
    expect(doc.paths['/v1/nodes/{id}'].get.parameters[0].schema).toMatchObject({ minLength: 1, maxLength: 255 });
    const offer = doc.paths['/v1/offers'].post.requestBody.content['application/json'].schema.properties;
    expect(offer.max_lease_duration).toMatchObject({ maxLength: 64, description: expect.stringMatching(/P3653D/) });
    const project = doc.paths['/v1/projects'].post.requestBody.content['application/json'].schema.properties;
    expect(project.description).toMatchObject({ maxLength: 1000 });
  });
});

describe('a body over 1 MiB is a 413 before any route reads it, and nothing is written', () => {
  const big = 'x'.repeat(1024 * 1024 + 1);

  it('in the one error shape on the REST API', async () => {
    const before = await dbSnapshot(t.store);
    const res = await t.request('POST', '/v1/leases', { token: member, body: { name: 'big', description: big, nodes: ['gpu-01'], duration: '1h' } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: { code: 'payload_too_large', details: { max_bytes: 1024 * 1024 } } });
    expect(await dbSnapshot(t.store)).toEqual(before);
  });

  it("in Ironic's error shape on the /baremetal gateway", async () => {
    const res = await t.request('PATCH', '/baremetal/v1/nodes/gpu-01', { token: member, body: [{ op: 'add', path: '/extra/x', value: big }] });
    expect(res.status).toBe(413);
    expect(JSON.parse((res.body as { error_message: string }).error_message)).toMatchObject({ faultstring: expect.stringContaining('larger than') });
  });

  it('a GET with no body is answered as before', async () => {
    const res = await t.request('GET', '/v1/nodes?limit=1', { token: member });
    expect(res.status).toBe(200);
  });
});
