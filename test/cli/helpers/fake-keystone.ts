import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FIXED_NOW } from './cli-runner.js';

export interface KeystoneProject {
  readonly id: string;
  readonly name: string;
  readonly domainId: string;
}

export interface KeystoneUser {
  readonly id: string;
  readonly name: string;
  readonly domainId: string;
  readonly password: string;
  /** Projects the user has a role on. */
  readonly projects: readonly KeystoneProject[];
  /** A role on the system (admin). */
  readonly system?: boolean;
}

export interface ApplicationCredential {
  readonly id: string;
  readonly name: string;
  readonly secret: string;
  readonly userId: string;
  readonly project: KeystoneProject;
}

export interface KeystoneRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: { auth?: { identity?: Record<string, unknown>; scope?: Record<string, unknown> } } & Record<string, unknown>;
}

export interface KeystoneEndpoint {
  readonly interface: string;
  readonly region_id: string;
  readonly url: string;
}

export interface KeystoneService {
  readonly type: string;
  readonly endpoints: readonly KeystoneEndpoint[];
}

type Ref = { id?: string; name?: string; domain?: { id?: string; name?: string } };

const DOMAINS: Readonly<Record<string, string>> = { default: 'Default', d2: 'Other' };

function inDomain(domainId: string, ref: Ref['domain']): boolean {
  return ref !== undefined && (ref.id === domainId || ref.name === DOMAINS[domainId]);
}

/**
 * A small Keystone: `POST /v3/auth/tokens` with the password, application-credential and token methods, project,
 * system or no scope; 201 with `X-Subject-Token`, a catalog and `expires_at`, 401 for anything wrong (a bad
 * password, an unknown user or project, a project the user has no role on). Records every request.
 */
export class FakeKeystone {
  readonly requests: KeystoneRequest[] = [];
  readonly users: KeystoneUser[] = [];
  readonly applicationCredentials: ApplicationCredential[] = [];
  /** The catalog every token carries (Keystone's shape). */
  catalog: KeystoneService[] = [];
  /** The expiry of tokens issued from now on. */
  expiresAt = new Date(FIXED_NOW.getTime() + 3_600_000).toISOString().replace('Z', '000Z');
  /** Every token issued, for what it stands. */
  readonly issued = new Map<string, { user: KeystoneUser; project: KeystoneProject | undefined; system: boolean }>();
  /** Answer every request with this status instead (e.g. 500). */
  failWith: number | undefined;
  private server: Server | undefined;
  /** `http://127.0.0.1:PORT` (the v3 API is under /v3). */
  url = '';

  get v3(): string {
    return `${this.url}/v3`;
  }

  /** The token requests received (POST /v3/auth/tokens). */
  get tokenRequests(): KeystoneRequest[] {
    return this.requests.filter((r) => r.method === 'POST' && r.path === '/v3/auth/tokens');
  }

  addUser(user: KeystoneUser): this {
    this.users.push(user);
    return this;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const request: KeystoneRequest = {
          method: req.method ?? 'GET',
          path: new URL(req.url ?? '/', 'http://fake').pathname,
          headers: req.headers,
          body: text === '' ? {} : JSON.parse(text),
        };
        this.requests.push(request);
        const reply = this.answer(request);
        res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) }).end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private answer(request: KeystoneRequest): { status: number; body: unknown; headers?: Record<string, string> } {
    const refuse = { status: 401, body: { error: { code: 401, message: 'The request you have made requires authentication.', title: 'Unauthorized' } } };
    if (this.failWith !== undefined) {
      return { status: this.failWith, body: { error: { code: this.failWith, message: 'An unexpected error prevented the server from fulfilling your request.', title: 'Internal Server Error' } } };
    }
    if (request.method !== 'POST' || request.path !== '/v3/auth/tokens') {
      return { status: 404, body: { error: { code: 404, message: 'Could not find the requested resource.', title: 'Not Found' } } };
    }
    const identity = request.body.auth?.identity ?? {};
    const methods = (identity.methods as string[] | undefined) ?? [];
    let user: KeystoneUser | undefined;
    let fixedProject: KeystoneProject | undefined;
    if (methods[0] === 'password') {
      const given = (identity.password as { user?: Ref & { password?: string } } | undefined)?.user ?? {};
      user = this.findUser(given);
      if (!user || user.password !== given.password) return refuse;
    } else if (methods[0] === 'application_credential') {
      const given = identity.application_credential as { id?: string; name?: string; secret?: string; user?: Ref };
      const credential = this.applicationCredentials.find((c) =>
        given.id !== undefined ? c.id === given.id : c.name === given.name && this.findUser(given.user ?? {})?.id === c.userId,
      );
      if (!credential || credential.secret !== given.secret) return refuse;
      if (request.body.auth?.scope) return { status: 401, body: { error: { code: 401, message: 'Application credentials cannot request a scope.', title: 'Unauthorized' } } };
      user = this.users.find((u) => u.id === credential.userId);
      fixedProject = credential.project;
    } else if (methods[0] === 'token') {
      const held = this.issued.get(((identity.token as { id?: string }) ?? {}).id ?? '');
      if (!held) return { status: 404, body: { error: { code: 404, message: 'Could not find token.', title: 'Not Found' } } };
      user = held.user;
    } else {
      return { status: 400, body: { error: { code: 400, message: 'Expecting to find identity in auth.', title: 'Bad Request' } } };
    }
    if (!user) return refuse;

    const scope = request.body.auth?.scope as { project?: Ref; system?: { all?: boolean } } | undefined;
    let project = fixedProject;
    let system = false;
    if (scope?.project) {
      const wanted = scope.project;
      if (wanted.id === undefined && wanted.domain === undefined) {
        return { status: 400, body: { error: { code: 400, message: 'Expecting to find domain in project.', title: 'Bad Request' } } };
      }
      project = user.projects.find((p) => (wanted.id !== undefined ? p.id === wanted.id : p.name === wanted.name && inDomain(p.domainId, wanted.domain)));
      if (!project) return refuse;
    } else if (scope?.system) {
      if (!user.system) return refuse;
      system = true;
    }

    const token = `gAAAAAB${randomBytes(24).toString('base64url')}`;
    this.issued.set(token, { user, project, system });
    const body = {
      token: {
        methods,
        expires_at: this.expiresAt,
        issued_at: FIXED_NOW.toISOString(),
        user: { id: user.id, name: user.name, domain: { id: user.domainId, name: DOMAINS[user.domainId] } },
        ...(project ? { project: { id: project.id, name: project.name, domain: { id: project.domainId, name: DOMAINS[project.domainId] } } } : {}),
        ...(system ? { system: { all: true } } : {}),
        roles: [{ id: 'r1', name: 'member' }],
        catalog: this.catalog.map((service, i) => ({
          id: `svc${i}`,
          type: service.type,
          name: service.type,
          endpoints: service.endpoints.map((e, j) => ({ id: `ep${i}-${j}`, region: e.region_id, ...e })),
        })),
      },
    };
    return { status: 201, body, headers: { 'x-subject-token': token } };
  }

  private findUser(given: Ref): KeystoneUser | undefined {
    if (given.id !== undefined) return this.users.find((u) => u.id === given.id);
    return this.users.find((u) => u.name === given.name && inDomain(u.domainId, given.domain));
  }
}

export const PHYSICS: KeystoneProject = { id: 'a0b1c2d3e4f5465788990011223344ff', name: 'physics-lab', domainId: 'default' };
export const CHEMISTRY: KeystoneProject = { id: 'c0c1c2c3c4c5465788990011223344ee', name: 'chemistry', domainId: 'default' };

export const ALICE_PASSWORD = 'correct horse battery staple';
export const ALICE: KeystoneUser = {
  id: '1f2e3d4c5b6a47988776655443322110',
  name: 'alice',
  domainId: 'default',
  password: ALICE_PASSWORD,
  projects: [PHYSICS, CHEMISTRY],
};
export const ADMIN: KeystoneUser = {
  id: '9f8e7d6c5b4a43218776655443322110',
  name: 'admin',
  domainId: 'default',
  password: 'admin-Pa55word-xyz',
  projects: [],
  system: true,
};
export const APP_SECRET = 'app-cred-secret-Zq8pW2vX9rT4';
export const APP_CREDENTIAL: ApplicationCredential = {
  id: 'ac1ac1ac1ac14ac1ac1ac1ac1ac1ac1a',
  name: 'ci',
  secret: APP_SECRET,
  userId: ALICE.id,
  project: CHEMISTRY,
};

/** A Keystone with alice, admin and alice's application credential, whose catalog holds `services`. */
export async function startKeystone(services: KeystoneService[] = []): Promise<FakeKeystone> {
  const keystone = new FakeKeystone().addUser(ALICE).addUser(ADMIN);
  keystone.applicationCredentials.push(APP_CREDENTIAL);
  keystone.catalog = services;
  return keystone.start();
}

/** A catalog entry with public and internal endpoints in RegionOne. */
export function service(type: string, publicUrl: string, internalUrl = publicUrl, region = 'RegionOne'): KeystoneService {
  return {
    type,
    endpoints: [
      { interface: 'public', region_id: region, url: publicUrl },
      { interface: 'internal', region_id: region, url: internalUrl },
    ],
  };
}
