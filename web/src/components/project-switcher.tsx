import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { unwrap } from '../api/errors';
import { useResource } from '../api/use-resource';
import { useSession } from '../auth/session';
import { useAction } from '../lib/use-action';
import { activeNavPath, navFor, type Viewer } from '../nav';
import { HOME, ROUTES } from '../routes';
import { ErrorNotice } from './error-notice';

/**
 * Under Keystone, a token is for one project: a user in several switches here (GET /v1/auth/projects, then POST
 * /v1/auth/tokens {token: {project}} for a token of the other one). A select and a button rather than switching on
 * change: the arrow keys move through a closed select's options, and each would be a switch.
 * After the switch the pages load again (the session's generation changes) and a page that belonged to the other
 * project (a lease's detail) gives way to its section ("/leases"), or to the home page when the section is not
 * the new project's.
 */
export function ProjectSwitcher({ viewer }: { viewer: Viewer }) {
  const { api, switchProject } = useSession();
  const [location, navigate] = useLocation();
  const projects = useResource(async (signal) => unwrap(await api.GET('/v1/auth/projects', { signal })).projects, []);
  const current = viewer.project?.id ?? '';
  const [choice, setChoice] = useState(current);
  const action = useAction();
  const select = useRef<HTMLSelectElement>(null);
  useEffect(() => setChoice(current), [current]);
  // Back on the select once the switch is done (it was disabled meanwhile, and the button it used is now too).
  useEffect(() => {
    if (action.done) select.current?.focus();
  }, [action.done]);

  const list = [...(projects.data ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  // One project (the current one), or the list not (yet) known: nothing to switch to.
  if (!list.some((p) => p.id !== current)) return null;
  const inList = list.some((p) => p.id === current);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (choice === current) return;
    void action.run(async () => {
      const next = await switchProject(choice);
      const section = activeNavPath(navFor(ROUTES, next).map((i) => i.path), location);
      navigate(section ?? HOME, { replace: true });
      return `Switched to ${next.project?.name ?? 'no project'}.`;
    });
  }

  return (
    <form className="project-switcher" onSubmit={submit}>
      <label htmlFor="project-switch">Project</label>
      <select id="project-switch" ref={select} value={choice} onChange={(e) => setChoice(e.target.value)} disabled={action.busy}>
        {!inList && (
          <option value={current} disabled>
            {viewer.project?.name ?? 'no project'}
          </option>
        )}
        {list.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
      <button type="submit" className="secondary small" disabled={action.busy || choice === current}>
        {action.busy ? 'Switching…' : 'Switch'}
      </button>
      <span className="visually-hidden" role="status">{action.done}</span>
      {action.error !== undefined && <ErrorNotice error={action.error} title="Not switched" />}
    </form>
  );
}
