import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from '../../../src/api/openapi-types';

/** The typed API client: paths, parameters and bodies checked against the server's OpenAPI document. */
export type Api = Client<paths>;
export type Schemas = components['schemas'];
export type Node = Schemas['Node'];
export type Lease = Schemas['Lease'];
export type Allocation = Lease['allocations'][number];
export type Offer = Schemas['Offer'];
export type OfferBatch = Schemas['OfferBatch'];
export type User = Schemas['User'];
export type Project = Schemas['Project'];
export type NewConsole = Schemas['NewConsole'];
export type Network = Schemas['Network'];
export type NodeNetworks = Schemas['NodeNetworks'];
export type Nic = Schemas['Nic'];
export type NetworkAttachment = Schemas['NetworkAttachment'];
export type Me = paths['/v1/me']['get']['responses'][200]['content']['application/json'];

export interface ApiOptions {
  /** Read at every request, so signing in or out needs no new client. */
  token: () => string | null;
  /** A 401 means the token was revoked or expired meanwhile: the session ends. */
  onUnauthorized?: () => void;
  fetch?: typeof globalThis.fetch;
  baseUrl?: string;
}

export function createApi(options: ApiOptions): Api {
  const client = createClient<paths>({
    // Same origin: the UI is served by the API process (or proxied to it by Vite in development).
    baseUrl: options.baseUrl ?? window.location.origin,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use({
    onRequest({ request }) {
      const token = options.token();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
    onResponse({ response }) {
      if (response.status === 401) options.onUnauthorized?.();
      return response;
    },
  });
  return client;
}
