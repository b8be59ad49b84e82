import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { Api, Project } from '../api/client';
import { unwrap } from '../api/errors';
import { fetchProjects } from '../api/projects';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { ConfirmButton } from '../components/confirm-button';
import { DurationText, shortDuration } from '../components/duration';
import { ErrorNotice } from '../components/error-notice';
import { Field, explainedByFields, fieldErrors } from '../components/field';
import { formatTime } from '../lib/format';
import { useAction } from '../lib/use-action';

function NewProjectForm({ api, onCreated }: { api: Api; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const action = useAction();
  const errors = fieldErrors(action.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    void action.run(async () => {
      const project = unwrap(
        await api.POST('/v1/projects', { body: { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) } }),
      );
      setName('');
      setDescription('');
      onCreated();
      return `Project ${project.name} created. Add its users on the Users & tokens page.`;
    });
  }

  return (
    <section className="card" aria-labelledby="new-project-title" style={{ marginTop: '1.5rem' }}>
      <h2 id="new-project-title" style={{ marginTop: 0 }}>New project</h2>
      <form onSubmit={submit} className="stack" noValidate>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <Field id="project-name" label="Name" hint="Letters, digits, “.”, “_” and “-”. Ironic’s node owner may name it." error={errors.name}>
            {(control) => (
              <input {...control} value={name} onChange={(e) => setName(e.target.value)} required spellCheck={false} autoCapitalize="off" />
            )}
          </Field>
          <Field id="project-description" className="grow" label="Description" hint="Optional." error={errors.description}>
            {(control) => <input {...control} value={description} onChange={(e) => setDescription(e.target.value)} />}
          </Field>
        </div>
        <div className="row">
          <button type="submit" disabled={action.busy}>{action.busy ? 'Creating…' : 'Create project'}</button>
          {action.done && <p className="ok" role="status">{action.done}</p>}
        </div>
        {action.error !== undefined && !explainedByFields(action.error, ['name', 'description']) && (
          <ErrorNotice error={action.error} title="Not created" />
        )}
      </form>
    </section>
  );
}

/** The quota of one project, edited in place: empty means "no limit" (null to the API). */
function QuotaEditor({ api, project, onDone, onCancel }: { api: Api; project: Project; onDone: (p: Project) => void; onCancel: () => void }) {
  const [maxNodes, setMaxNodes] = useState(project.quota.max_nodes === null ? '' : String(project.quota.max_nodes));
  const [maxDuration, setMaxDuration] = useState(project.quota.max_lease_duration ? shortDuration(project.quota.max_lease_duration).replaceAll(' ', '') : '');
  const action = useAction();
  const errors = fieldErrors(action.error);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const prefix = `quota-${project.id}`;

  function submit(event: FormEvent) {
    event.preventDefault();
    void action.run(async () => {
      const nodes = maxNodes.trim();
      const quota = {
        // A number the API checks (an integer, at least 0); what is not a number is sent as typed, for its message.
        max_nodes: nodes === '' ? null : Number.isNaN(Number(nodes)) ? (nodes as unknown as number) : Number(nodes),
        max_lease_duration: maxDuration.trim() === '' ? null : maxDuration.trim(),
      };
      const updated = unwrap(await api.PATCH('/v1/projects/{id}', { params: { path: { id: project.id } }, body: { quota } }));
      onDone(updated);
      return null;
    });
  }

  return (
    <form
      onSubmit={submit}
      className="stack"
      noValidate
      aria-label={`Quota of ${project.name}`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') onCancel();
      }}
    >
      <div className="row" style={{ alignItems: 'flex-start' }}>
        <Field id={`${prefix}-nodes`} label="Most nodes at once" hint="Empty: no limit. 0 stops new leases." error={errors['quota.max_nodes']}>
          {(control) => (
            <input {...control} ref={first} inputMode="numeric" value={maxNodes} onChange={(e) => setMaxNodes(e.target.value)} size={8} />
          )}
        </Field>
        <Field id={`${prefix}-duration`} label="Longest lease" hint="e.g. 5d or P5D. Empty: no limit." error={errors['quota.max_lease_duration']}>
          {(control) => (
            <input {...control} value={maxDuration} onChange={(e) => setMaxDuration(e.target.value)} size={10} spellCheck={false} autoCapitalize="off" />
          )}
        </Field>
      </div>
      <div className="row">
        <button type="submit" className="small" disabled={action.busy}>{action.busy ? 'Saving…' : 'Save quota'}</button>
        <button type="button" className="secondary small" onClick={onCancel}>Cancel</button>
      </div>
      {action.error !== undefined && !explainedByFields(action.error, ['quota.max_nodes', 'quota.max_lease_duration']) && (
        <ErrorNotice error={action.error} title="Not saved" />
      )}
    </form>
  );
}

export function AdminProjectsPage() {
  const api = useApi();
  // Under Keystone, projects are Keystone's (POST /v1/projects answers 409): a row appears here when one of a
  // project's users first signs in, and what stays Leasehold's is its quota.
  const keystone = useViewer().identity === 'keystone';
  const projects = useResource((signal) => fetchProjects(api, signal, 10), []);
  const [editing, setEditing] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const remove = useAction();
  // The project the last delete was for: its refusal (409: users, leases, offers or nodes) is shown on its row.
  const [target, setTarget] = useState<string | null>(null);

  const del = (project: Project) => {
    setTarget(project.id);
    setNotice(null);
    return remove.run(async () => {
      unwrap(await api.DELETE('/v1/projects/{id}', { params: { path: { id: project.id } } }));
      projects.reload();
      return `Project ${project.name} deleted.`;
    });
  };
  const items = projects.data?.items ?? [];

  return (
    <section>
      <h1>Projects</h1>
      {keystone ? (
        <p className="muted">
          Projects are Keystone’s: one appears here, with its Keystone id, when one of its users first signs in. They lease
          nodes and own nodes (Ironic’s owner field holds the Keystone project id). Quotas, Leasehold’s own, cap what a
          project leases.
        </p>
      ) : (
        <p className="muted">Projects hold users, lease nodes and own nodes (Ironic’s owner field names them). Quotas cap what a project leases.</p>
      )}
      <div className="toolbar">
        <button type="button" className="secondary" onClick={projects.reload}>Refresh</button>
      </div>
      {(notice ?? remove.done) && <p className="ok" role="status">{notice ?? remove.done}</p>}
      {projects.loading && <p aria-busy="true">Loading projects…</p>}
      {projects.error !== undefined && <ErrorNotice error={projects.error} retry={projects.reload} title="Could not load the projects" />}
      {projects.data && items.length === 0 && (
        <p className="empty">{keystone ? 'No projects yet: a project appears when one of its users first signs in.' : 'No projects yet: create the first one below.'}</p>
      )}
      {items.length > 0 && (
        <div className="table-wrap" role="region" aria-label="Projects" tabIndex={0}>
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Most nodes at once</th>
                <th scope="col">Longest lease</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {items.flatMap((project) => {
                const rows = [
                  <tr key={project.id}>
                    <th scope="row">
                      <span className="mono">{project.name}</span>
                    </th>
                    <td data-label="Description">{project.description || <span className="muted">—</span>}</td>
                    <td data-label="Most nodes" className="num">
                      {project.quota.max_nodes ?? <span className="muted">no limit</span>}
                    </td>
                    <td data-label="Longest lease">
                      <DurationText value={project.quota.max_lease_duration} />
                    </td>
                    <td data-label="Created" title={project.created_at}>{formatTime(project.created_at)}</td>
                    <td data-label="Actions">
                      <div className="row">
                        <button
                          type="button"
                          className="secondary small"
                          aria-expanded={editing === project.id}
                          onClick={() => setEditing(editing === project.id ? null : project.id)}
                        >
                          Edit quota
                        </button>
                        <ConfirmButton
                          danger
                          className="danger small"
                          label="Delete"
                          question={`Delete project ${project.name}?`}
                          confirmLabel="Delete it"
                          disabled={remove.busy}
                          onConfirm={() => del(project)}
                        />
                      </div>
                      {target === project.id && remove.error !== undefined && <ErrorNotice error={remove.error} title="Not deleted" />}
                    </td>
                  </tr>,
                ];
                if (editing === project.id) {
                  rows.push(
                    <tr key={`${project.id}-quota`}>
                      <td colSpan={6}>
                        <QuotaEditor
                          api={api}
                          project={project}
                          onCancel={() => setEditing(null)}
                          onDone={(updated) => {
                            setEditing(null);
                            setNotice(`Quota of ${updated.name} saved.`);
                            projects.reload();
                          }}
                        />
                      </td>
                    </tr>,
                  );
                }
                return rows;
              })}
            </tbody>
          </table>
        </div>
      )}
      {!keystone && <NewProjectForm api={api} onCreated={projects.reload} />}
    </section>
  );
}
