import { useState, type FormEvent, type ReactNode } from 'react';

/**
 * The requirement-expression box of the nodes page and the timeline: typed freely, applied on submit (the server
 * checks it), cleared in one click; the server's error is wired to the field (aria-invalid, aria-errormessage).
 */
export function ExpressionFilter(props: {
  id: string;
  label: string;
  placeholder: string;
  where: string;
  onApply: (where: string) => void;
  /** The API's message for a bad expression, shown under the field. */
  error?: string;
  help?: ReactNode;
  className?: string;
}) {
  const [draft, setDraft] = useState(props.where);
  const errorId = `${props.id}-error`;
  const helpId = props.help ? `${props.id}-help` : undefined;

  function apply(event: FormEvent) {
    event.preventDefault();
    props.onApply(draft.trim());
  }

  return (
    <>
      <form className={props.className ?? 'field'} onSubmit={apply} role="search" aria-label={props.label}>
        <label htmlFor={props.id}>Requirement expression</label>
        <div className="row nowrap">
          <input
            id={props.id}
            className="mono grow"
            placeholder={props.placeholder}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            aria-invalid={props.error !== undefined ? true : undefined}
            aria-describedby={[helpId, props.error !== undefined ? errorId : undefined].filter(Boolean).join(' ') || undefined}
            aria-errormessage={props.error !== undefined ? errorId : undefined}
            spellCheck={false}
            autoCapitalize="off"
          />
          <button type="submit">Apply</button>
          {props.where && (
            <button type="button" className="secondary" onClick={() => { setDraft(''); props.onApply(''); }}>
              Clear
            </button>
          )}
        </div>
        {props.help && (
          <p id={helpId} className="muted small">
            {props.help}
          </p>
        )}
      </form>
      {props.error !== undefined && (
        <p id={errorId} className="error-box mono" role="alert">
          {props.error}
        </p>
      )}
    </>
  );
}
