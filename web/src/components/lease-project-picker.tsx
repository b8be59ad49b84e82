import { errorText } from '../api/errors';
import { loadProjects } from '../api/projects';
import { useResource } from '../api/use-resource';
import { useApi } from '../auth/session';
import { Field } from './field';

interface Props {
  /** The chosen project's id, or '' for none. */
  value: string;
  onChange: (projectId: string) => void;
  /** The operator's own project, if it has one: what "none chosen" means then. */
  own: { id: string; name: string } | null;
  /** The API's message about the project, shown under the picker. */
  error?: string | undefined;
}

/**
 * The operator's "Lease for project" choice on the request form (the operator leases for a project; the API checks
 * it is the operator). Nothing is chosen at first: leasing in another project's name is a deliberate act.
 */
export function LeaseProjectPicker({ value, onChange, own, error }: Props) {
  const api = useApi();
  const projects = useResource((signal) => loadProjects(api, signal), []);
  const sorted = [...(projects.data ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const hint = projects.error
    ? `The projects could not be loaded: ${errorText(projects.error)}`
    : 'As the operator you lease for a project: its quota, budget and offers apply, and the audit log names you.';
  return (
    <Field id="lr-project" label="Lease for project" hint={hint} error={error}>
      {(control) => (
        <select {...control} value={value} onChange={(e) => onChange(e.target.value)} aria-busy={projects.loading || undefined}>
          <option value="">{own ? `Your own project (${own.name})` : projects.loading ? 'Loading projects…' : 'Choose a project…'}</option>
          {sorted.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
