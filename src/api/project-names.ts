import type { Store } from '../store/store.js';

/**
 * Names of the projects a response mentions, in one query (a page holds at most 1000 rows, so at most that many
 * projects): what lets the CLI and the web UI show `physics-lab` where the row holds a uuid, without asking for
 * each row. An id with no project row (a raw Ironic owner) is left out; callers show the id then.
 */
export async function projectNamesOf(store: Pick<Store, 'listProjects'>, ids: Iterable<string | null | undefined>): Promise<ReadonlyMap<string, string>> {
  const wanted = [...new Set([...ids].filter((id): id is string => typeof id === 'string' && id !== ''))];
  if (wanted.length === 0) return new Map();
  const page = await store.listProjects({ ids: wanted }, { limit: 1000 });
  return new Map(page.items.map((p) => [p.id, p.name]));
}
