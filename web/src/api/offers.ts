import type { Offer, OfferBatch } from './client';

/**
 * POST /v1/offers answers one offer for `node_id` and `{offers}` for `nodes`/`where`: the offer of a one-node
 * request (the server never answers it with a batch).
 */
export function oneOffer(created: Offer | OfferBatch): Offer {
  if ('offers' in created) {
    const [first] = created.offers;
    if (!first) throw new Error('the server answered an empty batch to a one-node offer');
    return first;
  }
  return created;
}
