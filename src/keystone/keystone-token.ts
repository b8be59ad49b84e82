/**
 * What a Keystone v3 token says, as Leasehold reads it (`POST /v3/auth/tokens` and `GET /v3/auth/tokens` answer
 * the same body): who, in which scope, with which roles, until when, and the service catalog.
 */
export interface KeystoneTokenInfo {
  readonly user: { readonly id: string; readonly name: string; readonly domainName: string | null };
  /** The project the token is scoped to; null for a system- or domain-scoped (or unscoped) token. */
  readonly project: { readonly id: string; readonly name: string; readonly domainName: string | null } | null;
  /** True for a system-scoped token (`"system": {"all": true}`). */
  readonly system: boolean;
  readonly roles: readonly string[];
  readonly expiresAt: Date;
  /** When Keystone issued it (null if the answer does not say): with expiresAt, the token's lifetime. */
  readonly issuedAt: Date | null;
  readonly catalog: readonly CatalogService[];
}

export interface CatalogService {
  readonly type: string;
  readonly name: string | null;
  readonly endpoints: readonly { readonly interface: string; readonly region: string | null; readonly url: string }[];
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Reads the `token` object of a Keystone answer; throws when it is not one (a proxy's page, a broken answer). */
export function parseTokenBody(body: unknown): KeystoneTokenInfo {
  const token = obj(obj(body).token);
  const user = obj(token.user);
  const expires = str(token.expires_at);
  const userId = str(user.id);
  if (!userId || !expires || Number.isNaN(Date.parse(expires))) throw new Error('not a Keystone token (no user or expires_at)');
  const project = obj(token.project);
  const projectId = str(project.id);
  return {
    user: { id: userId, name: str(user.name) ?? userId, domainName: str(obj(user.domain).name) },
    project: projectId ? { id: projectId, name: str(project.name) ?? projectId, domainName: str(obj(project.domain).name) } : null,
    system: obj(token.system).all === true,
    roles: (Array.isArray(token.roles) ? token.roles : []).map((r) => str(obj(r).name)).filter((n): n is string => n !== null),
    expiresAt: new Date(expires),
    issuedAt: str(token.issued_at) && !Number.isNaN(Date.parse(str(token.issued_at)!)) ? new Date(str(token.issued_at)!) : null,
    catalog: (Array.isArray(token.catalog) ? token.catalog : []).map((entry) => {
      const e = obj(entry);
      return {
        type: str(e.type) ?? '',
        name: str(e.name),
        endpoints: (Array.isArray(e.endpoints) ? e.endpoints : []).map((p) => {
          const ep = obj(p);
          return { interface: str(ep.interface) ?? '', region: str(ep.region_id) ?? str(ep.region), url: str(ep.url) ?? '' };
        }),
      };
    }),
  };
}

/** The URL of `type` in a catalog for an interface (public, internal, admin) and, if given, a region. */
export function catalogUrl(catalog: readonly CatalogService[], type: string, iface: string, region: string | null): string | null {
  for (const service of catalog) {
    if (service.type !== type) continue;
    const endpoint = service.endpoints.find((e) => e.interface === iface && (region === null || e.region === region));
    if (endpoint?.url) return endpoint.url;
  }
  return null;
}
