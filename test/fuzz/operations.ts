/** What the fuzzer needs of a JSON Schema (as @hono/zod-openapi writes request schemas into /openapi.json). */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly format?: string;
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly maxItems?: number;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly allOf?: readonly JsonSchema[];
}

export interface QueryParam {
  readonly name: string;
  readonly schema: JsonSchema;
}

/** One route and method, with everything a client can put in a request to it. */
export interface Operation {
  readonly method: string;
  /** The path template, `{id}` for each path parameter. */
  readonly path: string;
  readonly pathParams: readonly string[];
  readonly query: readonly QueryParam[];
  /** The JSON body's schema, or null when the route takes none. */
  readonly body: JsonSchema | null;
  /** `/v1/...` needs a token; the health checks do not. */
  readonly needsToken: boolean;
  /** Leasehold's error shape, or Ironic's (the gateway). */
  readonly errorShape: 'leasehold' | 'ironic';
}

interface OpenApiOperation {
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema: JsonSchema }>;
  readonly requestBody?: { readonly content?: Readonly<Record<string, { readonly schema: JsonSchema }>> };
  /** `[]`: no token needed (the sign-in's own routes). */
  readonly security?: readonly unknown[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * Every operation of the OpenAPI document the app serves: a route added to the API is fuzzed without touching
 * the fuzzer.
 */
export function operationsOf(doc: { readonly paths: Readonly<Record<string, Readonly<Record<string, OpenApiOperation>>>> }): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = op.parameters ?? [];
      out.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
        needsToken: path.startsWith('/v1/') && !(Array.isArray(op.security) && op.security.length === 0),
        errorShape: 'leasehold',
      });
    }
  }
  return out;
}

const JSON_PATCH: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: { op: { type: 'string', enum: ['add', 'replace', 'remove'] }, path: { type: 'string', pattern: '^/' }, value: {} },
    required: ['op', 'path'],
  },
};

/**
 * The Ironic-compatible gateway at /baremetal is not in the OpenAPI document (its contract is Ironic's API): its
 * routes by hand — the node by uuid or name, its sub-resources, the lists and the operator's pass-through.
 */
export const GATEWAY_OPERATIONS: readonly Operation[] = [
  { path: '/baremetal/v1/nodes', method: 'GET', pathParams: [], query: ironicListQuery(), body: null },
  { path: '/baremetal/v1/nodes/detail', method: 'GET', pathParams: [], query: ironicListQuery(), body: null },
  { path: '/baremetal/v1/nodes/{ident}', method: 'GET', pathParams: ['ident'], query: [{ name: 'fields', schema: { type: 'string', pattern: '^[a-z_,]+$' } }], body: null },
  { path: '/baremetal/v1/nodes/{ident}', method: 'PATCH', pathParams: ['ident'], query: [], body: JSON_PATCH },
  { path: '/baremetal/v1/nodes/{ident}/states', method: 'GET', pathParams: ['ident'], query: [], body: null },
  {
    path: '/baremetal/v1/nodes/{ident}/states/power',
    method: 'PUT',
    pathParams: ['ident'],
    query: [],
    body: { type: 'object', properties: { target: { type: 'string', enum: ['power on', 'power off', 'rebooting'] } }, required: ['target'] },
  },
  {
    path: '/baremetal/v1/nodes/{ident}/management/boot_device',
    method: 'PUT',
    pathParams: ['ident'],
    query: [],
    body: { type: 'object', properties: { boot_device: { type: 'string', enum: ['pxe', 'disk'] } }, required: ['boot_device'] },
  },
  { path: '/baremetal/v1/nodes/{ident}/vifs/{vif}', method: 'DELETE', pathParams: ['ident', 'vif'], query: [], body: null },
  { path: '/baremetal/v1/ports', method: 'GET', pathParams: [], query: ironicListQuery(), body: null },
].map((op) => ({ ...op, needsToken: true, errorShape: 'ironic' as const }));

function ironicListQuery(): QueryParam[] {
  return [
    { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
    { name: 'marker', schema: { type: 'string', pattern: '^[0-9a-f-]{36}$' } },
    { name: 'fields', schema: { type: 'string', pattern: '^[a-z_,]+$' } },
    { name: 'owner', schema: { type: 'string', pattern: '^[^\\x00]*$' } },
    { name: 'provision_state', schema: { type: 'string', enum: ['available', 'active'] } },
  ];
}

/** The JSON types a schema allows (`["integer", "null"]` for a nullable integer); empty: anything. */
export function typesOf(schema: JsonSchema): string[] {
  if (schema.type !== undefined) return typeof schema.type === 'string' ? [schema.type] : [...schema.type];
  const members = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (members) return [...new Set(members.flatMap(typesOf))];
  if (schema.enum) return [...new Set(schema.enum.map((v) => (v === null ? 'null' : typeof v)))];
  if (schema.const !== undefined) return [typeof schema.const];
  return [];
}
