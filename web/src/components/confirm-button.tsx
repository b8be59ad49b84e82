import { useEffect, useRef, useState } from 'react';

interface Props {
  label: string;
  /** The question shown in place of the button, e.g. "End the lease now? The nodes will be wiped." */
  question: string;
  confirmLabel: string;
  onConfirm: () => void | Promise<unknown>;
  danger?: boolean;
  disabled?: boolean;
  className?: string;
}

/**
 * A button that asks first, inline (no modal to trap focus in): the question and "Yes"/"No" replace it, focus
 * moves to the confirming button, Escape or "No" goes back.
 */
export function ConfirmButton({ label, question, confirmLabel, onConfirm, danger, disabled, className }: Props) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const openerRef = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);

  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (wasAsking.current) openerRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <button ref={openerRef} type="button" className={className ?? (danger ? 'danger' : 'secondary')} disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span
      className="confirm"
      role="group"
      aria-label={question}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setAsking(false);
      }}
    >
      <span className="confirm-question">{question}</span>
      <button
        ref={confirmRef}
        type="button"
        className={danger ? 'danger small' : 'small'}
        onClick={() => {
          setAsking(false);
          void onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" className="secondary small" onClick={() => setAsking(false)}>
        No
      </button>
    </span>
  );
}
