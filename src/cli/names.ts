import type { Project } from './api-types.js';
import type { CliContext } from './context.js';

/**
 * Project names for ids, for tables that would otherwise show bare uuids. Best effort: one page of the projects
 * the caller can see; an id it cannot see (or any failure) stays an id, and nothing is asked when no id is wanted.
 */
export async function projectNames(ctx: CliContext, ids: Iterable<string>): Promise<ReadonlyMap<string, string>> {
  if (new Set(ids).size === 0) return new Map();
  try {
    const client = await ctx.client();
    const page = await client.get<{ projects?: Project[] }>('/v1/projects', { limit: 1000 });
    return new Map((page.projects ?? []).map((p) => [p.id, p.name]));
  } catch {
    return new Map();
  }
}

export function nameOf(names: ReadonlyMap<string, string>, id: string): string {
  return names.get(id) ?? id;
}

/** `name (id)` when the name is known, else the id. */
export function projectLabel(names: ReadonlyMap<string, string>, id: string): string {
  const name = names.get(id);
  return name ? `${name} (${id})` : id;
}
