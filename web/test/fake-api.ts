import type { Viewer } from '../src/nav';

export type Handler = (request: Request, url: URL) => unknown | Response | Promise<unknown | Response>;

/**
 * A fetch that answers like the API from a table of `METHOD /path` handlers (`:param` segments match anything),
 * recording the requests. A handler returns a body (200 JSON) or a Response; an unknown route is a JSON 404.
 */
export function fakeApi(routes: Record<string, Handler>) {
  const requests: Request[] = [];
  const table = Object.entries(routes).map(([key, handler]) => {
    const [method, pattern] = key.split(' ') as [string, string];
    const re = new RegExp(`^${pattern.replace(/:[a-z_]+/g, '[^/]+')}$`);
    return { method, re, handler };
  });
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input, init);
    requests.push(request.clone());
    const url = new URL(request.url);
    const route = table.find((r) => r.method === request.method && r.re.test(url.pathname));
    if (!route) return json({ error: { code: 'not_found', message: `route "${request.method} ${url.pathname}" not found`, details: {} } }, 404);
    const result = await route.handler(request, url);
    return result instanceof Response ? result : json(result, request.method === 'POST' ? 201 : 200);
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

export function apiError(status: number, code: string, message: string, details: Record<string, unknown> = {}): Response {
  return json({ error: { code, message, details } }, status);
}

export const PROJECT = { id: '7d0c5d1e-0000-4000-8000-000000000001', name: 'physics-lab' };

export function meBody(
  role: Viewer['role'],
  project: { id: string; name: string } | null = role === 'admin' ? null : PROJECT,
  identity: Viewer['identity'] = 'local',
) {
  return {
    user: {
      id: 'u-1',
      name: role === 'admin' ? 'admin' : `alice-${role}`,
      project_id: project?.id ?? null,
      role,
      // A Keystone user has no row of Leasehold's, hence no creation time.
      created_at: identity === 'keystone' ? null : '2030-01-01T00:00:00Z',
    },
    project,
    identity,
  };
}

export function viewer(role: Viewer['role'], ownsNodes = false, identity: Viewer['identity'] = 'local'): Viewer {
  return {
    userId: 'u-1',
    userName: 'alice',
    role,
    project: role === 'admin' ? null : PROJECT,
    ownsNodes,
    identity,
  };
}
