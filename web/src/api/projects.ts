import type { Viewer } from '../nav';
import type { Api } from './client';
import { unwrap } from './errors';
import { fetchAll } from './fetch-all';

/** Every project (the operator's view; others get their own only), following `next` for up to `maxPages` pages. */
export function fetchProjects(api: Api, signal: AbortSignal, maxPages = 5) {
  return fetchAll(async (marker) => {
    const page = unwrap(await api.GET('/v1/projects', { params: { query: { limit: 1000, marker } }, signal }));
    return { items: page.projects, next: page.next };
  }, maxPages);
}

export async function loadProjects(api: Api, signal: AbortSignal) {
  return (await fetchProjects(api, signal)).items;
}

/** Project names by id: the operator may list them all; anyone else knows its own project's name only. */
export async function loadProjectNames(api: Api, viewer: Viewer, signal: AbortSignal): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  if (viewer.project) names.set(viewer.project.id, viewer.project.name);
  if (viewer.role === 'admin') for (const p of await loadProjects(api, signal)) names.set(p.id, p.name);
  return names;
}
