import type { Query } from './client.js';
import type { CliContext } from './context.js';
import { ApiError } from './errors.js';
import { renderJson } from './output.js';

/** A list response: `{"<key>": [...], "next": "/v1/...?marker=..." | null}`. */
type Page<T> = Record<string, unknown> & { next?: string | null };

export interface ListRequest {
  readonly path: string;
  /** The array's key in the response, e.g. "nodes"; also the noun of the "no ... found" note. */
  readonly key: string;
  readonly query?: Query;
  readonly all?: boolean;
  readonly limit?: number;
  readonly marker?: string;
}

/** Guards against a server whose `next` never ends (a bug there must not hang the CLI). */
const MAX_PAGES = 10_000;

/**
 * Prints a list: the first page, with a hint on stderr when there is more, or with `--all` every page,
 * following the server's `next` links (which keep the filters) until there are no more.
 */
export async function printList<T>(
  ctx: CliContext,
  request: ListRequest,
  render: (items: T[]) => string | Promise<string>,
): Promise<void> {
  const client = await ctx.client();
  const query = { ...request.query, limit: request.limit, marker: request.marker };
  const first = await client.get<Page<T>>(request.path, query);
  const items = itemsOf<T>(first, request.key);
  let next = first.next ?? null;

  if (request.all) {
    const seen = new Set<string>();
    for (let pages = 1; next !== null; pages += 1) {
      if (seen.has(next) || pages > MAX_PAGES) {
        throw new ApiError(0, 'bad_response', `the server keeps answering with the next link ${next}; stopping`);
      }
      seen.add(next);
      const page = await client.get<Page<T>>(next);
      items.push(...itemsOf<T>(page, request.key));
      next = page.next ?? null;
    }
    // One document in the server's own shape, as if the whole list had been one page.
    if (ctx.json) ctx.out(renderJson({ ...first, [request.key]: items, next: null }));
  } else if (ctx.json) {
    ctx.out(renderJson(first));
  }

  if (!ctx.json) {
    if (items.length === 0) ctx.note(`no ${request.key} found`);
    else ctx.out(await render(items));
  }
  if (next !== null) ctx.note(`more: --all or --marker ${markerOf(next)}`);
}

function itemsOf<T>(page: Page<T>, key: string): T[] {
  const items = page[key];
  return Array.isArray(items) ? (items as T[]) : [];
}

function markerOf(next: string): string {
  return new URL(next, 'http://next.invalid').searchParams.get('marker') ?? next;
}
