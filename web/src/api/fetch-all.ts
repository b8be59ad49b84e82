/**
 * Every page of a list endpoint. Lists answer `next` as a relative URL carrying the `marker` of the following
 * page (or null); the UI asks for the biggest page (1000) and follows at most `maxPages`, so a huge inventory
 * cannot hang the browser.
 */
export async function fetchAll<T>(
  page: (marker: string | undefined) => Promise<{ items: T[]; next: string | null }>,
  maxPages = 20,
): Promise<{ items: T[]; truncated: boolean }> {
  const items: T[] = [];
  let marker: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const result = await page(marker);
    items.push(...result.items);
    if (!result.next) return { items, truncated: false };
    marker = new URL(result.next, 'http://x').searchParams.get('marker') ?? undefined;
    if (!marker) return { items, truncated: false };
  }
  return { items, truncated: true };
}
