/** A lease's or an allocation's state as a labelled badge (colour is never the only signal: the word is there). */
export function StateBadge({ state, step }: { state: string; step?: string | null }) {
  return (
    <span className={`badge badge-${state}`}>
      {state}
      {step ? <span className="badge-step"> · {step.replaceAll('_', ' ')}</span> : null}
    </span>
  );
}
