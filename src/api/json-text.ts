import type { TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';

/**
 * A 200 whose JSON is already text (made by the same serializers, e.g. the node list's per-node copies), typed as
 * the route's JSON response so the OpenAPI schema keeps documenting it. The cast is the only thing this adds:
 * Hono types a response by how it was made, and text made ahead of time has no `c.json` to come from. The text
 * may come as its UTF-8 bytes.
 */
export function jsonText<T>(text: string | Uint8Array<ArrayBuffer>): TypedResponse<JSONParsed<T>, 200, 'json'> {
  const response = new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
  return response as unknown as TypedResponse<JSONParsed<T>, 200, 'json'>;
}
