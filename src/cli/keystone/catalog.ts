import { UsageError } from '../errors.js';

/** One endpoint of a service in a Keystone token's catalog. */
export interface CatalogEndpoint {
  readonly interface: string;
  readonly region: string | undefined;
  readonly url: string;
}

export interface CatalogService {
  readonly type: string;
  readonly endpoints: readonly CatalogEndpoint[];
}

/** Leasehold registered under a type of its own; else its Ironic-compatible gateway registered as `baremetal`. */
export const LEASEHOLD_SERVICE_TYPE = 'leasehold';
export const BAREMETAL_SERVICE_TYPE = 'baremetal';
/** The only services the CLI looks up: the token cache keeps these and drops the rest of the catalog. */
export const CATALOG_TYPES: readonly string[] = [LEASEHOLD_SERVICE_TYPE, BAREMETAL_SERVICE_TYPE];

export interface EndpointChoice {
  /** `public` unless `OS_INTERFACE` / `interface` says otherwise (`publicURL` is `public`). */
  readonly interface: string | undefined;
  /** Any region unless `OS_REGION_NAME` / `region_name` names one. */
  readonly region: string | undefined;
}

export interface CatalogUrl {
  readonly url: string;
  /** How it was found, for `whoami`: "Keystone catalog, leasehold service (public)". */
  readonly source: string;
}

const GATEWAY_SUFFIX = /\/baremetal\/*$/;

function normalInterface(value: string | undefined): string {
  return (value ?? 'public').toLowerCase().replace(/url$/, '');
}

function endpointOf(catalog: readonly CatalogService[], type: string, choice: EndpointChoice): CatalogEndpoint | undefined {
  const wanted = normalInterface(choice.interface);
  // The first match, as keystoneauth takes it: several regions without OS_REGION_NAME is the operator's ordering.
  return catalog
    .filter((service) => service.type === type)
    .flatMap((service) => service.endpoints)
    .find((e) => normalInterface(e.interface) === wanted && (choice.region === undefined || e.region === choice.region));
}

/**
 * Leasehold's URL from a token's catalog: a `leasehold` service if registered, else the `baremetal` endpoint with
 * its `/baremetal` removed (Leasehold's API lives beside its gateway). Exit 2 with what was looked for when neither
 * is there, or when `baremetal` is Ironic itself (an endpoint not ending in /baremetal is not Leasehold's).
 */
export function leaseholdUrlFromCatalog(catalog: readonly CatalogService[], choice: EndpointChoice): CatalogUrl {
  const where = `interface ${normalInterface(choice.interface)}${choice.region ? `, region ${choice.region}` : ''}`;
  const own = endpointOf(catalog, LEASEHOLD_SERVICE_TYPE, choice);
  if (own) return { url: own.url.replace(/\/+$/, ''), source: `Keystone catalog: ${LEASEHOLD_SERVICE_TYPE} service, ${where}` };
  const gateway = endpointOf(catalog, BAREMETAL_SERVICE_TYPE, choice);
  const hint = 'give --url or LEASEHOLD_URL, or register Leasehold in the Keystone catalog (see `leasehold help login`)';
  if (gateway) {
    if (!GATEWAY_SUFFIX.test(gateway.url)) {
      throw new UsageError(
        `the Keystone catalog's ${BAREMETAL_SERVICE_TYPE} endpoint (${where}) is ${gateway.url}, which is not a Leasehold ` +
          `gateway (it does not end in /baremetal) and there is no ${LEASEHOLD_SERVICE_TYPE} service: ${hint}`,
      );
    }
    return {
      url: gateway.url.replace(GATEWAY_SUFFIX, ''),
      source: `Keystone catalog: ${BAREMETAL_SERVICE_TYPE} service without /baremetal, ${where}`,
    };
  }
  throw new UsageError(
    `no Leasehold URL: the Keystone catalog has no ${LEASEHOLD_SERVICE_TYPE} or ${BAREMETAL_SERVICE_TYPE} endpoint for ${where}; ${hint}`,
  );
}
