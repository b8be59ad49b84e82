import { z } from '@hono/zod-openapi';
import { durationProblem, formatDuration, MAX_DURATION_MS, MAX_DURATION_TEXT } from '../domain/duration.js';
import { EXPRESSION_LIMITS } from '../domain/expression/parser.js';
import { PROJECT_ROLES, Role } from '../domain/identity.js';
import { NOT_PRINTABLE, PRINTABLE, PRINTABLE_LINES, TEXT_LIMITS } from '../domain/text-bounds.js';
import { isAcceptedInstant } from '../domain/time-bounds.js';

/** Response and shared request schemas: the public contract as served in /openapi.json. */

const Timestamp = z.string().openapi({ format: 'date-time', example: '2030-01-01T00:00:00.000Z' });
const Uuid = z.string().openapi({ format: 'uuid' });
/** Not a uuid format: under Keystone a project or user id is Keystone's (32 hex digits, no dashes). */
const ProjectId = z.string().openapi({ description: "A project's id: a uuid under local identity, Keystone's project id under Keystone." });
const UserId = z.string().openapi({ description: "A user's id: a uuid under local identity, Keystone's user id under Keystone." });

/*
 * Request building blocks: every field a client sends goes through one of these, so the same bounds hold in
 * every route and show in /openapi.json (maxLength, pattern). A NUL byte reached PostgreSQL and answered 500;
 * durations and times past every range did the same (issue 11). Validation refuses them first, with a 400 naming
 * the field; src/store/db-errors.ts maps PostgreSQL's data exceptions to 400 as a backstop only.
 */

/**
 * A name, id or filter value: 1 to `max` characters, printable (no control characters, no lone surrogates);
 * `trim` strips surrounding white space first (a name typed by a person).
 */
export function safeName(max: number = TEXT_LIMITS.name, options: { readonly trim?: boolean } = {}) {
  return (options.trim ? z.string().trim() : z.string()).min(1).max(max).regex(PRINTABLE, NOT_PRINTABLE);
}

/** Free text (a description): up to `max` characters; tabs and line breaks allowed, other control characters not. */
export function safeText(max: number = TEXT_LIMITS.description) {
  return z.string().max(max).regex(PRINTABLE_LINES, NOT_PRINTABLE);
}

/**
 * What names one of Leasehold's things in a path, a body or a filter: its uuid, or its name where it has one
 * (projects, nodes). Checked here, before any lookup reaches SQL; each field says which it takes.
 */
export const IdOrName = safeName();

/** The start of an id as tables print it (`ff102e2b`): hex digits and dashes only, matched case-insensitively. */
export const IdPrefix = z
  .string()
  .regex(/^[0-9a-fA-F-]{1,64}$/, 'the start of an id: hex digits and dashes')
  .openapi({ description: 'Only those whose id starts with this (the short ids tables print, e.g. `ff102e2b`).', example: 'ff102e2b' });

/** An RFC 3339 time with its offset, from 1970-01-01 to the end of 9999. */
export const TimeInput = z.iso
  .datetime({ offset: true })
  .refine((v) => isAcceptedInstant(Date.parse(v)), 'a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z')
  .openapi({ format: 'date-time', example: '2030-01-01T00:00:00Z' });

/** A duration, ISO 8601 ("P3D") or short ("3d"), at most 10 years. */
export const DurationInput = z
  .string()
  .min(1)
  .max(MAX_DURATION_TEXT)
  .superRefine((value, ctx) => {
    const problem = durationProblem(value);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} ${problem}` });
  })
  .openapi({
    description: `ISO 8601 ("P5D") or short ("5d"); at most ${formatDuration(MAX_DURATION_MS)} (10 years).`,
    example: 'P5D',
  });

/** A requirement expression: at most 4,096 characters and 64 levels of "(" and "not" (the parser checks depth). */
export const ExpressionInput = z
  .string()
  .min(1)
  .max(EXPRESSION_LIMITS.maxLength)
  .regex(PRINTABLE_LINES, NOT_PRINTABLE)
  .openapi({
    description: `Requirement expression, e.g. \`memory >= 48GiB and gpus >= 1\`; at most ${EXPRESSION_LIMITS.maxLength} characters and ${EXPRESSION_LIMITS.maxDepth} levels of nesting.`,
    example: 'memory >= 48GiB and gpus >= 1',
  });

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
    max_node_hours: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Node-hours the project may book per calendar month (UTC); null = no limit.' }),
  })
  .openapi('Quota');

export const ProjectSchema = z
  .object({
    id: ProjectId,
    name: z.string(),
    description: z.string(),
    quota: QuotaSchema,
    notice_offsets: z.array(z.string()).nullable().openapi({
      description: "How long before a lease's end its lessee hears `lease.ending_soon` (ISO 8601, largest first); null: the operator's default (LEASEHOLD_NOTICE_OFFSETS).",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Project');

export const RoleSchema = z.enum([...PROJECT_ROLES, Role.Admin]).openapi({
  description: 'reader < member < manager within a project; admin is the operator.',
});

export const UserSchema = z
  .object({
    id: UserId,
    name: z.string(),
    project_id: ProjectId.nullable(),
    project_name: z.string().nullable().openapi({ description: 'The name of project_id (null with it).' }),
    role: RoleSchema,
    created_at: Timestamp.nullable().openapi({ description: "Null for a Keystone user (GET /v1/me): it has no row here." }),
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

/** A node's typed facts (domain/inventory.ts `NodeFacts`), as nodes and offers show them. */
export const NodeFactsSchema = z.record(z.string(), z.union([z.number(), z.string(), z.boolean()]));

export const NodeSchema = z
  .object({
    id: z.string().openapi({ description: "The hardware driver's node uuid (Ironic's uuid)." }),
    name: z.string().nullable(),
    resource_class: z.string().nullable(),
    owner: z.string().nullable().openapi({ description: "Ironic's owner field: a project id or name." }),
    owner_project: z.object({ id: ProjectId, name: z.string() }).nullable(),
    lessee: z.string().nullable(),
    facts: NodeFactsSchema.openapi({
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
    quarantined: z.boolean().openapi({ description: "Cleaning failed at a lease's end: no new lease until its owner or the operator clears it." }),
    quarantine_reason: z.string().nullable().openapi({ description: "Ironic's last_error from the failed cleaning (not shown to a lessee)." }),
    lease: z
      .object({
        id: Uuid,
        project_id: ProjectId,
        project_name: z.string().openapi({ description: "The lessee project's name (its id when the project has no row)." }),
        end: Timestamp,
        sublease_of: z
          .object({ lease_id: Uuid, lease_name: z.string(), project_id: ProjectId, project_name: z.string(), start: Timestamp, end: Timestamp, state: z.string() })
          .nullable()
          .optional()
          .openapi({ description: 'On GET /v1/nodes/{id}: when the lease right now is a sub-lease, the lease it is sub-leased from (its lessee has no access meanwhile).' }),
      })
      .nullable()
      .openapi({ description: 'The lease on the node right now, shown to its owner, the operator and the lessee.' }),
    synced_at: Timestamp,
  })
  .openapi('Node');

export const IdParam = z.object({
  id: IdOrName.openapi({ param: { name: 'id', in: 'path' } }),
});

export function errorResponses(...statuses: number[]) {
  const descriptions: Record<number, string> = {
    400: 'Invalid request',
    401: 'Missing, unknown, revoked or expired token',
    403: 'Not permitted',
    404: 'Not found (or not visible to the caller)',
    409: 'Conflict',
    429: 'Too many unknown tokens from this address: try again after Retry-After seconds',
    503: 'A backend is unavailable: try again after Retry-After seconds',
  };
  // Wherever a token is checked, the bad-token limiter may answer first (src/api/auth-limiter.ts).
  const all = statuses.includes(401) && !statuses.includes(429) ? [...statuses, 429] : statuses;
  return Object.fromEntries(
    all.map((s) => [
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
