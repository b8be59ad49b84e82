import { z } from '@hono/zod-openapi';
import { PROJECT_ROLES, Role } from '../domain/identity.js';

/** Response and shared request schemas: the public contract as served in /openapi.json. */

const Timestamp = z.string().openapi({ format: 'date-time', example: '2030-01-01T00:00:00.000Z' });
const Uuid = z.string().openapi({ format: 'uuid' });

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'not_found' }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi('Error');

export const QuotaSchema = z
  .object({
    max_nodes: z.number().int().nullable().openapi({ description: 'Most nodes leased at once; null = no limit.' }),
    max_lease_duration: z
      .string()
      .nullable()
      .openapi({ description: 'Longest lease (ISO 8601); null = no limit.', example: 'P5D' }),
  })
  .openapi('Quota');

export const ProjectSchema = z
  .object({
    id: Uuid,
    name: z.string(),
    description: z.string(),
    quota: QuotaSchema,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Project');

export const RoleSchema = z.enum([...PROJECT_ROLES, Role.Admin]).openapi({
  description: 'reader < member < manager within a project; admin is the operator.',
});

export const UserSchema = z
  .object({
    id: Uuid,
    name: z.string(),
    project_id: Uuid.nullable(),
    role: RoleSchema,
    created_at: Timestamp,
  })
  .openapi('User');

export const TokenSchema = z
  .object({
    id: Uuid,
    user_id: Uuid,
    prefix: z.string().openapi({ description: 'The first characters of the token, to recognise it.' }),
    description: z.string(),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
  })
  .openapi('Token');

export const NewTokenSchema = TokenSchema.extend({
  token: z.string().openapi({ description: 'The secret. Shown only in this response; store it now.' }),
}).openapi('NewToken');

export const NodeSchema = z
  .object({
    id: z.string().openapi({ description: "The hardware driver's node uuid (Ironic's uuid)." }),
    name: z.string().nullable(),
    resource_class: z.string().nullable(),
    owner: z.string().nullable().openapi({ description: "Ironic's owner field: a project id or name." }),
    owner_project: z.object({ id: Uuid, name: z.string() }).nullable(),
    lessee: z.string().nullable(),
    facts: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).openapi({
      description: 'Typed facts for requirement expressions: memory and disk in bytes, cpus, gpus, cpu_arch, ...',
    }),
    properties: z.record(z.string(), z.unknown()),
    traits: z.array(z.string()),
    power_state: z.string().nullable(),
    provision_state: z.string(),
    target_provision_state: z.string().nullable(),
    maintenance: z.boolean(),
    maintenance_reason: z.string().nullable(),
    last_error: z.string().nullable(),
    console_enabled: z.boolean(),
    synced_at: Timestamp,
  })
  .openapi('Node');

export const IdParam = z.object({
  id: z.string().min(1).openapi({ param: { name: 'id', in: 'path' } }),
});

export function errorResponses(...statuses: number[]) {
  const descriptions: Record<number, string> = {
    400: 'Invalid request',
    401: 'Missing, unknown, revoked or expired token',
    403: 'Not permitted',
    404: 'Not found (or not visible to the caller)',
    409: 'Conflict',
    503: 'A backend is unavailable',
  };
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      { description: descriptions[s] ?? 'Error', content: { 'application/json': { schema: ErrorSchema } } },
    ]),
  );
}

export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { 'application/json': { schema } } } as const;
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } } as const;
}
