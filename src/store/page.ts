/** One page of a list, keyset-paginated (store/keyset-page.ts): every listing of the store, and the API's `next`. */
export interface PageRequest {
  /** 1..1000 */
  readonly limit: number;
  /** The id of the last item of the previous page. */
  readonly marker?: string | null;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Pass as `marker` to get the next page; null on the last page. */
  readonly nextMarker: string | null;
}
