import type { Api, Lease } from '../api/client';
import { unwrap } from '../api/errors';
import { useAction } from '../lib/use-action';
import { ErrorNotice } from './error-notice';

type Policy = Lease['replace_policy'];

export const REPLACE_POLICIES: readonly { readonly value: Policy; readonly label: string }[] = [
  { value: 'auto', label: 'Replace it at once (auto)' },
  { value: 'ask', label: 'Tell us; we ask for a substitute (ask)' },
  { value: 'never', label: 'Keep it and record the failure (never)' },
];

/**
 * What the lease does when one of its nodes fails (maintenance, a broken provision state, a quarantine, gone from
 * Ironic): a select that saves on change for those who may change the lease, the words otherwise.
 */
export function ReplacePolicy({ api, lease, canChange, onChanged }: { api: Api; lease: Lease; canChange: boolean; onChanged: () => void }) {
  const action = useAction();
  const current = REPLACE_POLICIES.find((p) => p.value === lease.replace_policy);
  if (!canChange) return <>{current?.label ?? lease.replace_policy}</>;
  const change = (replace: Policy) =>
    action.run(async () => {
      const updated = unwrap(await api.PATCH('/v1/leases/{id}', { params: { path: { id: lease.id } }, body: { replace } }));
      onChanged();
      return `Saved: ${REPLACE_POLICIES.find((p) => p.value === updated.replace_policy)?.label ?? updated.replace_policy}.`;
    });
  return (
    <>
      <select aria-label="When a node fails" value={lease.replace_policy} disabled={action.busy} onChange={(e) => void change(e.target.value as Policy)}>
        {REPLACE_POLICIES.map((p) => (
          <option key={p.value} value={p.value}>{p.label}</option>
        ))}
      </select>
      {action.done && <span className="small ok" role="status"> {action.done}</span>}
      {action.error !== undefined && <ErrorNotice error={action.error} />}
    </>
  );
}
