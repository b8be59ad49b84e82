import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import type { Api, Schemas, User } from '../api/client';
import { unwrap } from '../api/errors';
import { fetchAll } from '../api/fetch-all';
import { loadProjects } from '../api/projects';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { ConfirmButton } from '../components/confirm-button';
import { CopyButton } from '../components/copy-button';
import { ErrorNotice } from '../components/error-notice';
import { Field, explainedByFields, fieldErrors } from '../components/field';
import { UtcTimeField, utcInputToIso } from '../components/utc-time';
import { formatTime } from '../lib/format';
import { useAction } from '../lib/use-action';

type Token = Schemas['Token'];
type NewToken = Schemas['NewToken'];
type Role = User['role'];

const ROLES: Role[] = ['reader', 'member', 'manager', 'admin'];
const ROLE_HINT = 'reader reads; member also leases, offers, powers and uses consoles; manager also manages the project’s users and tokens; admin is the operator (no project).';
const OPERATORS = '(operators)';

async function loadUsers(api: Api, project: string, signal: AbortSignal) {
  const projectId = project === '' || project === OPERATORS ? undefined : project;
  const users = await fetchAll(async (marker) => {
    const page = unwrap(await api.GET('/v1/users', { params: { query: { project_id: projectId, limit: 1000, marker } }, signal }));
    return { items: page.users, next: page.next };
  }, 10);
  return { users: project === OPERATORS ? users.items.filter((u) => u.project_id === null) : users.items, truncated: users.truncated };
}

async function loadTokens(api: Api, userId: string, signal: AbortSignal) {
  const tokens = await fetchAll(async (marker) => {
    const page = unwrap(await api.GET('/v1/tokens', { params: { query: { user_id: userId, limit: 1000, marker } }, signal }));
    return { items: page.tokens, next: page.next };
  }, 5);
  // Newest first: the one just made is on top.
  return tokens.items.slice().sort((a, b) => b.created_at.localeCompare(a.created_at));
}

function tokenStatus(token: Token, now: number): { text: string; title?: string; className: string } {
  if (token.revoked_at) return { text: `revoked ${formatTime(token.revoked_at)}`, title: token.revoked_at, className: 'muted' };
  if (token.expires_at && Date.parse(token.expires_at) <= now) return { text: 'expired', className: 'muted' };
  return { text: 'valid', className: 'ok' };
}

function NewUserForm({ api, projects, defaultProject, onCreated }: { api: Api; projects: Schemas['Project'][]; defaultProject: string; onCreated: (u: User) => void }) {
  const [name, setName] = useState('');
  // Until one is chosen: the project the list is filtered by, else the first project.
  const [chosen, setProject] = useState<string | null>(null);
  const project = chosen ?? (defaultProject || projects[0]?.id || '');
  const [role, setRole] = useState<Role>('member');
  const action = useAction();
  const errors = fieldErrors(action.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    void action.run(async () => {
      const user = unwrap(
        await api.POST('/v1/users', { body: { name: name.trim(), role, ...(project ? { project_id: project } : {}) } }),
      );
      setName('');
      onCreated(user);
      return `User ${user.name} created. Give it a token below.`;
    });
  }

  return (
    <section className="card" aria-labelledby="new-user-title" style={{ marginTop: '1.5rem' }}>
      <h2 id="new-user-title" style={{ marginTop: 0 }}>New user</h2>
      <form onSubmit={submit} className="stack" noValidate>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <Field id="user-name" label="Name" hint="Letters, digits, “.”, “_”, “@” and “-”." error={errors.name}>
            {(control) => <input {...control} value={name} onChange={(e) => setName(e.target.value)} required spellCheck={false} autoCapitalize="off" />}
          </Field>
          <Field id="user-project" label="Project" error={errors.project_id}>
            {(control) => (
              <select {...control} value={project} onChange={(e) => setProject(e.target.value)}>
                <option value="">No project (operators only)</option>
                {projects.map((p) => (
                  <option key={p.id} value={p.id}>{p.name}</option>
                ))}
              </select>
            )}
          </Field>
          <Field id="user-role" style={{ maxWidth: '22rem' }} label="Role" hint={ROLE_HINT} error={errors.role}>
            {(control) => (
              <select {...control} value={role} onChange={(e) => setRole(e.target.value as Role)}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>{r}</option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div className="row">
          <button type="submit" disabled={action.busy}>{action.busy ? 'Creating…' : 'Create user'}</button>
          {action.done && <p className="ok" role="status">{action.done}</p>}
        </div>
        {action.error !== undefined && !explainedByFields(action.error, ['name', 'project_id', 'role']) && (
          <ErrorNotice error={action.error} title="Not created" />
        )}
      </form>
    </section>
  );
}

/** The value of a token just issued: here once, in this component's state only, gone when it unmounts. */
function IssuedToken({ token, userName, onDone }: { token: NewToken; userName: string; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, []);
  return (
    <div className="card stack" role="region" aria-labelledby="issued-token-title" style={{ borderColor: 'var(--warn)' }}>
      <h3 id="issued-token-title" style={{ margin: 0 }}>New token for {userName}</h3>
      <p style={{ margin: 0 }}>
        <strong>Copy it now: you will not see it again.</strong> Leasehold keeps only a hash of it; if it is lost, revoke it and
        make another.
      </p>
      <div className="field" style={{ width: '100%' }}>
        <label htmlFor="issued-token-value">Token</label>
        <input
          ref={field}
          id="issued-token-value"
          className="mono"
          readOnly
          value={token.token}
          onFocus={(e) => e.target.select()}
          spellCheck={false}
          style={{ width: '100%' }}
        />
      </div>
      <div className="row">
        <CopyButton text={token.token} label="Copy token" className="small" />
        <button type="button" className="secondary small" onClick={onDone}>I have stored it</button>
      </div>
    </div>
  );
}

function TokensPanel({ api, user, onClose }: { api: Api; user: User; onClose: () => void }) {
  const tokens = useResource((signal) => loadTokens(api, user.id, signal), [user.id]);
  const [issued, setIssued] = useState<NewToken | null>(null);
  const [description, setDescription] = useState('');
  const [expires, setExpires] = useState('');
  const create = useAction();
  const revoke = useAction();
  const errors = fieldErrors(create.error);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [user.id]);
  const now = Date.now();

  function submit(event: FormEvent) {
    event.preventDefault();
    void create.run(async () => {
      const expiresAt = utcInputToIso(expires);
      const token = unwrap(
        await api.POST('/v1/tokens', {
          body: { user_id: user.id, ...(description.trim() ? { description: description.trim() } : {}), ...(expiresAt ? { expires_at: expiresAt } : {}) },
        }),
      );
      setIssued(token);
      setDescription('');
      setExpires('');
      tokens.reload();
      return null;
    });
  }

  return (
    <section className="card stack" aria-labelledby="tokens-title" id="tokens-panel" style={{ marginTop: '1.5rem', justifyItems: 'stretch' }}>
      <div className="row spread">
        <h2 id="tokens-title" ref={heading} tabIndex={-1} style={{ margin: 0 }}>
          Tokens of {user.name}
        </h2>
        <button type="button" className="secondary small" onClick={onClose}>Close</button>
      </div>

      {issued && <IssuedToken token={issued} userName={user.name} onDone={() => setIssued(null)} />}

      {revoke.done && <p className="ok" role="status">{revoke.done}</p>}
      {revoke.error !== undefined && <ErrorNotice error={revoke.error} title="Not revoked" />}
      {tokens.loading && <p aria-busy="true">Loading tokens…</p>}
      {tokens.error !== undefined && <ErrorNotice error={tokens.error} retry={tokens.reload} title="Could not load the tokens" />}
      {tokens.data && tokens.data.length === 0 && <p className="empty">{user.name} has no tokens: it cannot sign in until it gets one.</p>}
      {tokens.data && tokens.data.length > 0 && (
        <div className="table-wrap" role="region" aria-label={`Token list of ${user.name}`} tabIndex={0}>
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Prefix</th>
                <th scope="col">Description</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Status</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((token) => {
                const status = tokenStatus(token, now);
                return (
                  <tr key={token.id}>
                    <th scope="row" className="mono">{token.prefix}…</th>
                    <td data-label="Description">{token.description || <span className="muted">—</span>}</td>
                    <td data-label="Created" title={token.created_at}>{formatTime(token.created_at)}</td>
                    <td data-label="Expires" title={token.expires_at ?? undefined}>{token.expires_at ? formatTime(token.expires_at) : <span className="muted">never</span>}</td>
                    <td data-label="Status"><span className={status.className} title={status.title}>{status.text}</span></td>
                    <td data-label="Actions">
                      {token.revoked_at ? (
                        <span className="muted small">—</span>
                      ) : (
                        <ConfirmButton
                          danger
                          className="danger small"
                          label="Revoke"
                          question={`Revoke ${token.prefix}…? It stops working at once.`}
                          confirmLabel="Revoke it"
                          disabled={revoke.busy}
                          onConfirm={() =>
                            revoke.run(async () => {
                              unwrap(await api.DELETE('/v1/tokens/{id}', { params: { path: { id: token.id } } }));
                              tokens.reload();
                              return `Token ${token.prefix}… revoked.`;
                            })
                          }
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}

      <form onSubmit={submit} className="stack" noValidate aria-labelledby="new-token-title" style={{ justifyItems: 'stretch' }}>
        <h3 id="new-token-title" style={{ margin: 0 }}>New token</h3>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <Field id="token-description" className="grow" label="Description" hint="What it is for, e.g. “laptop” or “CI”." error={errors.description}>
            {(control) => <input {...control} value={description} onChange={(e) => setDescription(e.target.value)} />}
          </Field>
          <UtcTimeField id="token-expires" label="Expires" value={expires} onChange={setExpires} emptyMeaning="never" error={errors.expires_at} />
        </div>
        <div className="row">
          <button type="submit" disabled={create.busy}>{create.busy ? 'Creating…' : 'Create token'}</button>
        </div>
        {create.error !== undefined && !explainedByFields(create.error, ['description', 'expires_at']) && (
          <ErrorNotice error={create.error} title="No token made" />
        )}
      </form>
    </section>
  );
}

export function AdminUsersPage() {
  const api = useApi();
  const viewer = useViewer();
  const [project, setProject] = useState('');
  const projects = useResource((signal) => loadProjects(api, signal), []);
  const users = useResource((signal) => loadUsers(api, project, signal), [project]);
  const [selected, setSelected] = useState<string | null>(null);
  const remove = useAction();
  const [target, setTarget] = useState<string | null>(null);
  const names = useMemo(() => new Map((projects.data ?? []).map((p) => [p.id, p.name])), [projects.data]);
  const list = users.data?.users ?? [];
  const selectedUser = list.find((u) => u.id === selected) ?? null;

  const del = (user: User) => {
    setTarget(user.id);
    return remove.run(async () => {
      unwrap(await api.DELETE('/v1/users/{id}', { params: { path: { id: user.id } } }));
      if (selected === user.id) setSelected(null);
      users.reload();
      return `User ${user.name} deleted; its tokens no longer work.`;
    });
  };

  return (
    <section>
      <h1>Users &amp; tokens</h1>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="users-project">Project</label>
          <select id="users-project" value={project} onChange={(e) => setProject(e.target.value)}>
            <option value="">Every project</option>
            <option value={OPERATORS}>Operators (no project)</option>
            {(projects.data ?? []).map((p) => (
              <option key={p.id} value={p.id}>{p.name}</option>
            ))}
          </select>
        </div>
        <button type="button" className="secondary toolbar-button" onClick={users.reload}>Refresh</button>
      </div>
      {remove.done && <p className="ok" role="status">{remove.done}</p>}
      {projects.error !== undefined && <ErrorNotice error={projects.error} retry={projects.reload} title="Could not load the projects" />}
      {users.loading && <p aria-busy="true">Loading users…</p>}
      {users.error !== undefined && <ErrorNotice error={users.error} retry={users.reload} title="Could not load the users" />}
      {users.data && list.length === 0 && <p className="empty">No users here.</p>}
      {list.length > 0 && (
        <div className="table-wrap" role="region" aria-label="Users" tabIndex={0}>
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Project</th>
                <th scope="col">Role</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.map((user) => (
                <tr key={user.id}>
                  <th scope="row">
                    <span className="mono">{user.name}</span>
                    {user.id === viewer.userId && <span className="muted small"> (you)</span>}
                  </th>
                  <td data-label="Project">{user.project_id ? names.get(user.project_id) ?? user.project_id : <span className="muted">none</span>}</td>
                  <td data-label="Role">{user.role}</td>
                  <td data-label="Created" title={user.created_at ?? undefined}>{user.created_at ? formatTime(user.created_at) : ""}</td>
                  <td data-label="Actions">
                    <div className="row">
                      <button
                        type="button"
                        className="secondary small"
                        aria-expanded={selected === user.id}
                        aria-controls={selected === user.id ? 'tokens-panel' : undefined}
                        onClick={() => setSelected(selected === user.id ? null : user.id)}
                      >
                        Tokens
                      </button>
                      {user.id !== viewer.userId && (
                        <ConfirmButton
                          danger
                          className="danger small"
                          label="Delete"
                          question={`Delete ${user.name}? Its tokens stop working at once.`}
                          confirmLabel="Delete it"
                          disabled={remove.busy}
                          onConfirm={() => del(user)}
                        />
                      )}
                    </div>
                    {target === user.id && remove.error !== undefined && <ErrorNotice error={remove.error} title="Not deleted" />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {users.data?.truncated && <p className="muted small">Showing the first 10,000 users.</p>}

      {selectedUser && <TokensPanel key={selectedUser.id} api={api} user={selectedUser} onClose={() => setSelected(null)} />}

      <NewUserForm
        api={api}
        projects={projects.data ?? []}
        defaultProject={project === OPERATORS ? '' : project}
        onCreated={(user) => {
          users.reload();
          setSelected(user.id);
        }}
      />
    </section>
  );
}
