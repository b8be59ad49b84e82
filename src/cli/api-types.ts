/**
 * The v1 API's JSON shapes as the CLI reads them: aliases of the types generated from the server's OpenAPI document
 * (src/api/openapi-types.d.ts, written by `npm run gen:api`; a test fails while it is stale), so the CLI compiles
 * against the API as it is served. Only `error.details`, which the document leaves open, is written out here.
 */
import type { components, paths } from '../api/openapi-types.js';

type Schemas = components['schemas'];

/** The JSON body of the answer `status` to `method path`. */
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;

export type Project = Schemas['Project'];
export type User = Schemas['User'];
export type Token = Schemas['Token'];
export type NewToken = Schemas['NewToken'];
export type Node = Schemas['Node'];
export type Offer = Schemas['Offer'];
export type OfferBatch = Schemas['OfferBatch'];
export type Lease = Schemas['Lease'];
export type Quote = Schemas['Quote'];
export type ExtensionQuote = Schemas['ExtensionQuote'];
export type AuditEvent = Schemas['Event'];
export type Usage = Schemas['Usage'];
export type Network = Schemas['Network'];
export type NodeNetworks = Schemas['NodeNetworks'];
export type Nic = Schemas['Nic'];
export type NetworkAttachment = Schemas['NetworkAttachment'];
export type Allocation = Lease['allocations'][number];
export type LeaseState = Lease['state'];
export type OfferStatus = Offer['status'];
export type Me = Answer<'/v1/me', 'get', 200>;
export type PowerResult = Answer<'/v1/nodes/{id}/power', 'post', 202>;
export type BootDeviceResult = Answer<'/v1/nodes/{id}/boot-device', 'post', 200>;
export type SyncResult = Answer<'/v1/nodes/sync', 'post', 200>;

/** Every value of a string union, in the order given; the compiler refuses a list that misses one or adds one. */
function allOf<T extends string>() {
  return <const L extends readonly T[]>(list: L & ([T] extends [L[number]] ? unknown : never)): L => list;
}

/** The lease states, in lifecycle order (`--state`). */
export const LEASE_STATES = allOf<LeaseState>()(['pending', 'active', 'ending', 'ended', 'cancelled', 'failed']);
/** The offer statuses (`--status`). */
export const OFFER_STATUSES = allOf<OfferStatus>()(['scheduled', 'active', 'expired', 'withdrawn']);

/** `error.details` of a 409 from `POST /v1/leases` or `/v1/leases/quote` (the document leaves details open). */
export interface LeaseRefusalDetails {
  readonly earliest_start?: string | null;
  readonly groups?: readonly {
    readonly group: number;
    readonly count: number;
    readonly where: string;
    readonly matching: number;
    readonly free: number;
    readonly allowed: number;
    readonly reasons: readonly string[];
  }[];
}
