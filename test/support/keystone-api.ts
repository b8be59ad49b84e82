/**
 * Keystone's v3 REST API as the end-to-end tests need it, from Node (no Python per call): projects, users, role
 * assignments, application credentials, tokens (issue, validate, revoke), the catalog, and clouds.yaml entries
 * for the real `openstack` CLI. Works against any Keystone; test/support/keystone.ts starts one.
 * Every call is one HTTP request (two for the first call of a role name, resolved once) of ≈ 10-25 ms.
 */

export interface KeystoneCredentials {
  readonly username: string;
  readonly password: string;
  /** The project the admin's token is scoped to (Default domain). */
  readonly projectName: string;
}

export interface KeystoneProject {
  readonly id: string;
  readonly name: string;
  readonly domain_id: string;
}

/** A user of the Default domain with its password. */
export interface KeystoneUser {
  readonly id: string;
  readonly name: string;
  readonly password: string;
}

export interface ApplicationCredential {
  readonly id: string;
  readonly secret: string;
  readonly name: string;
  readonly userId: string;
  readonly projectId: string;
}

/** Who asks for a token, and for which scope (none: unscoped, unless the user has a default project). */
export type TokenRequest =
  | {
      readonly user: { readonly id?: string; readonly name?: string; readonly password: string };
      /** A project id. */
      readonly project?: string;
      /** A project name in the Default domain. */
      readonly projectName?: string;
      /** A system-scoped token (`{"system": {"all": true}}`). */
      readonly system?: boolean;
    }
  | { readonly applicationCredential: { readonly id: string; readonly secret: string } };

/** The `token` object Keystone answers with (POST and GET /v3/auth/tokens). */
export interface TokenInfo {
  readonly expires_at: string;
  readonly issued_at: string;
  readonly methods: string[];
  readonly user: { id: string; name: string; domain: { id: string; name: string } };
  readonly project?: { id: string; name: string; domain: { id: string; name: string } };
  readonly system?: { all: boolean };
  readonly roles?: Array<{ id: string; name: string }>;
  readonly is_admin_project?: boolean;
  readonly application_credential?: { id: string; name: string; restricted: boolean };
  readonly catalog?: Array<{ type: string; name: string; endpoints: Array<{ interface: string; url: string; region: string }> }>;
  readonly [key: string]: unknown;
}

export interface IssuedToken {
  /** The X-Subject-Token header: what a client sends as X-Auth-Token. */
  readonly token: string;
  readonly info: TokenInfo;
  readonly expiresAt: Date;
}

export interface KeystoneReply<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

export interface KeystoneRequestOptions {
  /** X-Auth-Token; default the admin's; null sends none. */
  readonly token?: string | null;
  /** X-Subject-Token (token validation and revocation). */
  readonly subjectToken?: string;
  /** Statuses to return instead of throwing (default: any 2xx is fine, anything else throws). */
  readonly expect?: readonly number[];
}

/** One cloud of a clouds.yaml (`openstack --os-cloud NAME …`). */
export interface CloudConfig {
  readonly auth_type?: 'password' | 'v3applicationcredential' | 'token';
  readonly auth: Readonly<Record<string, string>>;
  readonly region_name: string;
  readonly interface: 'public' | 'internal';
  readonly identity_api_version: 3;
}

export type Interface = 'public' | 'internal' | 'admin';

/** A token getter that reuses one token until it nears its end (a quarter of its life or 60 s before). */
export function tokenSource(issue: () => Promise<IssuedToken>): () => Promise<string> {
  let current: Promise<IssuedToken> | undefined;
  return async () => {
    const held = current && (await current.catch(() => undefined));
    if (held) {
      const life = held.expiresAt.getTime() - Date.parse(held.info.issued_at);
      if (held.expiresAt.getTime() - Date.now() > Math.min(60_000, life / 4)) return held.token;
    }
    current = issue();
    return (await current).token;
  };
}

/** A clouds.yaml text: JSON is YAML, and it quotes every password whatever it contains. */
export function cloudsYaml(clouds: Readonly<Record<string, CloudConfig>>): string {
  return `${JSON.stringify({ clouds }, null, 2)}\n`;
}

export class KeystoneApi {
  /** The admin's project-scoped token, reissued before it expires. */
  readonly adminToken: () => Promise<string>;
  private readonly roleIds = new Map<string, Promise<string>>();

  /** `url`: the v3 root, e.g. http://127.0.0.1:5000/v3. */
  constructor(
    readonly url: string,
    readonly admin: KeystoneCredentials,
  ) {
    this.adminToken = tokenSource(() =>
      this.issueToken({ user: { name: admin.username, password: admin.password }, projectName: admin.projectName }),
    );
  }

  async request<T = any>(method: string, path: string, body?: unknown, opts: KeystoneRequestOptions = {}): Promise<KeystoneReply<T>> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const token = opts.token === undefined ? await this.adminToken() : opts.token;
    if (token !== null) headers['X-Auth-Token'] = token;
    if (opts.subjectToken) headers['X-Subject-Token'] = opts.subjectToken;
    const res = await fetch(this.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    if (opts.expect ? !opts.expect.includes(res.status) : res.status < 200 || res.status >= 300) {
      const message = (parsed as { error?: { message?: string } } | null)?.error?.message ?? text.slice(0, 300);
      throw new Error(`Keystone ${method} ${path} → ${res.status}: ${message}`);
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  // -------------------------------------------------------------------------------------------- tokens

  /** POST /v3/auth/tokens: a password (project-, system- or un-scoped) or an application credential. */
  async issueToken(req: TokenRequest): Promise<IssuedToken> {
    let auth: Record<string, unknown>;
    if ('applicationCredential' in req) {
      auth = { identity: { methods: ['application_credential'], application_credential: req.applicationCredential } };
    } else {
      const user = req.user.id
        ? { id: req.user.id, password: req.user.password }
        : { name: req.user.name, domain: { id: 'default' }, password: req.user.password };
      auth = { identity: { methods: ['password'], password: { user } } };
      if (req.system) auth.scope = { system: { all: true } };
      else if (req.project) auth.scope = { project: { id: req.project } };
      else if (req.projectName) auth.scope = { project: { name: req.projectName, domain: { id: 'default' } } };
    }
    const res = await this.request<{ token: TokenInfo }>('POST', '/auth/tokens', { auth }, { token: null });
    const token = res.headers.get('x-subject-token');
    if (!token) throw new Error('Keystone issued a token without X-Subject-Token');
    return { token, info: res.body.token, expiresAt: new Date(res.body.token.expires_at) };
  }

  /** GET /v3/auth/tokens as the admin: 200 with the token's user, scope and roles, or 404 (invalid, expired, revoked). */
  async validateToken(token: string): Promise<{ status: number; info?: TokenInfo }> {
    const res = await this.request<{ token: TokenInfo }>('GET', '/auth/tokens', undefined, { subjectToken: token, expect: [200, 404] });
    return res.status === 200 ? { status: 200, info: res.body.token } : { status: res.status };
  }

  /** DELETE /v3/auth/tokens as the admin: the token is invalid from now on. */
  async revokeToken(token: string): Promise<void> {
    await this.request('DELETE', '/auth/tokens', undefined, { subjectToken: token });
  }

  // -------------------------------------------------------------------------------------------- projects, users, roles

  async createProject(name: string, opts: { description?: string } = {}): Promise<KeystoneProject> {
    const res = await this.request<{ project: KeystoneProject }>('POST', '/projects', {
      project: { name, domain_id: 'default', enabled: true, ...(opts.description ? { description: opts.description } : {}) },
    });
    return res.body.project;
  }

  /** A project of the Default domain by name; throws when there is none. */
  async findProject(name: string): Promise<KeystoneProject> {
    const res = await this.request<{ projects: KeystoneProject[] }>('GET', `/projects?domain_id=default&name=${encodeURIComponent(name)}`);
    const project = res.body.projects[0];
    if (!project) throw new Error(`Keystone has no project ${name}`);
    return project;
  }

  /** A role's id by name (admin, member, reader, manager, service, …), looked up once. */
  roleId(name: string): Promise<string> {
    let id = this.roleIds.get(name);
    if (!id) {
      id = this.request<{ roles: Array<{ id: string }> }>('GET', `/roles?name=${encodeURIComponent(name)}`).then((res) => {
        const role = res.body.roles[0];
        if (!role) throw new Error(`Keystone has no role ${name}`);
        return role.id;
      });
      id.catch(() => this.roleIds.delete(name));
      this.roleIds.set(name, id);
    }
    return id;
  }

  /**
   * A user of the Default domain with a password (random unless given) and, with `project`, `roles` there
   * (`default_project_id` too, so an unscoped password token is scoped to it).
   */
  async createUser(name: string, opts: { password?: string; project?: string; roles?: readonly string[] } = {}): Promise<KeystoneUser> {
    const password = opts.password ?? randomPassword();
    const res = await this.request<{ user: { id: string; name: string } }>('POST', '/users', {
      user: { name, password, domain_id: 'default', enabled: true, ...(opts.project ? { default_project_id: opts.project } : {}) },
    });
    const user = { id: res.body.user.id, name, password };
    if (opts.project) for (const role of opts.roles ?? []) await this.assignProjectRole(user.id, opts.project, role);
    return user;
  }

  /** createUser, or when the name exists a new password (and the roles) for it. */
  async ensureUser(name: string, opts: { password?: string; project?: string; roles?: readonly string[] } = {}): Promise<KeystoneUser> {
    const found = await this.request<{ users: Array<{ id: string }> }>('GET', `/users?domain_id=default&name=${encodeURIComponent(name)}`);
    const existing = found.body.users[0];
    if (!existing) return this.createUser(name, opts);
    const password = opts.password ?? randomPassword();
    await this.request('PATCH', `/users/${existing.id}`, { user: { password, enabled: true } });
    if (opts.project) for (const role of opts.roles ?? []) await this.assignProjectRole(existing.id, opts.project, role);
    return { id: existing.id, name, password };
  }

  /**
   * A service user (Ironic's, Leasehold's): admin and service on project `service`, enough to validate anyone's
   * token and to see every Ironic node. Created, or given a new password when the name exists.
   */
  async ensureServiceUser(name: string, password?: string): Promise<{ user: KeystoneUser; project: KeystoneProject }> {
    const project = await this.findProject('service');
    const user = await this.ensureUser(name, { project: project.id, roles: ['admin', 'service'], ...(password ? { password } : {}) });
    return { user, project };
  }

  /** PUT /v3/projects/{project}/users/{user}/roles/{role} (idempotent). */
  async assignProjectRole(userId: string, projectId: string, role: string): Promise<void> {
    await this.request('PUT', `/projects/${projectId}/users/${userId}/roles/${await this.roleId(role)}`);
  }

  /** PUT /v3/system/users/{user}/roles/{role}: e.g. the cloud admin's system-scoped `admin`. */
  async assignSystemRole(userId: string, role = 'admin'): Promise<void> {
    await this.request('PUT', `/system/users/${userId}/roles/${await this.roleId(role)}`);
  }

  /**
   * An application credential of `user` for `project` (Keystone lets only the user create its own: this takes a
   * token of the user there first). `roles` default to all the user's roles in the project.
   */
  async createApplicationCredential(
    user: KeystoneUser,
    project: string,
    opts: { name?: string; roles?: readonly string[]; expiresAt?: Date; unrestricted?: boolean } = {},
  ): Promise<ApplicationCredential> {
    const { token } = await this.issueToken({ user, project });
    const name = opts.name ?? `ac-${randomPassword().slice(0, 8)}`;
    const res = await this.request<{ application_credential: { id: string; secret: string } }>(
      'POST',
      `/users/${user.id}/application_credentials`,
      {
        application_credential: {
          name,
          ...(opts.roles ? { roles: opts.roles.map((r) => ({ name: r })) } : {}),
          ...(opts.expiresAt ? { expires_at: opts.expiresAt.toISOString() } : {}),
          ...(opts.unrestricted ? { unrestricted: true } : {}),
        },
      },
      { token },
    );
    const ac = res.body.application_credential;
    return { id: ac.id, secret: ac.secret, name, userId: user.id, projectId: project };
  }

  // -------------------------------------------------------------------------------------------- catalog

  /**
   * Makes the catalog hold service `type` (named `name`) with these endpoints in `region`: creates what is
   * missing, re-points what differs, leaves the other interfaces alone. E.g. Leasehold's /baremetal as the public
   * `baremetal` endpoint while Ironic stays the internal one.
   */
  async setEndpoints(
    type: string,
    name: string,
    urls: Partial<Record<Interface, string>>,
    region = 'RegionOne',
  ): Promise<{ serviceId: string }> {
    const services = await this.request<{ services: Array<{ id: string }> }>('GET', `/services?type=${encodeURIComponent(type)}`);
    const serviceId =
      services.body.services[0]?.id ??
      (await this.request<{ service: { id: string } }>('POST', '/services', { service: { type, name, enabled: true } })).body.service.id;
    const existing = await this.request<{ endpoints: Array<{ id: string; interface: Interface; url: string; region_id: string }> }>(
      'GET',
      `/endpoints?service_id=${serviceId}`,
    );
    for (const [iface, url] of Object.entries(urls) as Array<[Interface, string]>) {
      const current = existing.body.endpoints.find((e) => e.interface === iface && e.region_id === region);
      if (!current) {
        await this.request('POST', '/endpoints', { endpoint: { service_id: serviceId, interface: iface, url, region_id: region, enabled: true } });
      } else if (current.url !== url) {
        await this.request('PATCH', `/endpoints/${current.id}`, { endpoint: { url } });
      }
    }
    return { serviceId };
  }

  // -------------------------------------------------------------------------------------------- clouds.yaml

  /** A clouds.yaml entry for `user` with a password, scoped to a project (id) or the system. */
  passwordCloud(user: KeystoneUser, scope: { project: string } | { system: true }, iface: 'public' | 'internal' = 'public'): CloudConfig {
    const auth: Record<string, string> = { auth_url: this.url, username: user.name, password: user.password, user_domain_id: 'default' };
    if ('project' in scope) auth.project_id = scope.project;
    else auth.system_scope = 'all';
    return { auth_type: 'password', auth, region_name: 'RegionOne', interface: iface, identity_api_version: 3 };
  }

  /** A clouds.yaml entry for an application credential. */
  applicationCredentialCloud(ac: ApplicationCredential, iface: 'public' | 'internal' = 'public'): CloudConfig {
    return {
      auth_type: 'v3applicationcredential',
      auth: { auth_url: this.url, application_credential_id: ac.id, application_credential_secret: ac.secret },
      region_name: 'RegionOne',
      interface: iface,
      identity_api_version: 3,
    };
  }
}

function randomPassword(): string {
  return globalThis.crypto.randomUUID().replaceAll('-', '');
}
