import { z } from '@hono/zod-openapi';
import type { Page } from '../store/page.js';
import { safeName } from './schemas.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export const PageQuery = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .default(DEFAULT_LIMIT)
    .openapi({ description: `Items per page (1-${MAX_LIMIT}).`, example: DEFAULT_LIMIT }),
  marker: safeName().optional().openapi({ description: 'The id of the last item of the previous page.' }),
};

export const NextLink = z
  .string()
  .nullable()
  .openapi({ description: 'Relative URL of the next page, or null on the last page.' });

/** The same request with `marker` moved on: clients follow it without rebuilding filters. */
export function nextLink(requestUrl: string, page: Page<unknown>): string | null {
  if (page.nextMarker === null) return null;
  const url = new URL(requestUrl);
  url.searchParams.set('marker', page.nextMarker);
  return `${url.pathname}?${url.searchParams.toString()}`;
}
