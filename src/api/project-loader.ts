import type { Project } from '../domain/identity.js';
import { Coalescer } from '../store/coalescer.js';
import type { Store } from '../store/store.js';

/** Projects in one read at most (a page of listProjects). */
const MAX_BATCH = 1_000;

/**
 * The caller's own project by id, read for the requests that ask for it in the same turn of the event loop in one
 * query (each read is sent after each of its callers asked, so each sees every change committed before it did).
 * A burst of lease requests (measured: 64 clients at once on PGlite) read their projects one statement each, a
 * quarter of a round's statements once the planning reads were shared.
 */
export class ProjectLoader {
  private readonly batches: Coalescer<string, Project | null>;

  constructor(store: Pick<Store, 'listProjects'>) {
    this.batches = new Coalescer(
      async (ids) => {
        const page = await store.listProjects({ ids: [...new Set(ids)] }, { limit: MAX_BATCH });
        const byId = new Map(page.items.map((p) => [p.id, p]));
        return ids.map((id) => byId.get(id) ?? null);
      },
      { maxBatch: MAX_BATCH },
    );
  }

  byId(id: string): Promise<Project | null> {
    return this.batches.submit(id);
  }
}
