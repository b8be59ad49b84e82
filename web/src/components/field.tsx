import type { CSSProperties, ReactNode } from 'react';
import { ApiError } from '../api/errors';

/** What a form control inside <Field> spreads onto itself: its id, and its error and hint wired for screen readers. */
export interface FieldControl {
  id: string;
  'aria-invalid'?: true;
  'aria-describedby'?: string;
}

interface Props {
  id: string;
  label: ReactNode;
  /** A line under the control (format, default, the local time of a UTC value, ...). */
  hint?: ReactNode;
  /** The API's message for this field, shown verbatim under the control. */
  error?: string | undefined;
  className?: string;
  style?: CSSProperties;
  children: (control: FieldControl) => ReactNode;
}

/**
 * A labelled form control with its hint and its error: the control gets aria-invalid and aria-describedby pointing
 * at the error (first) and the hint, so a screen reader reads the API's message when the field is focused.
 */
export function Field({ id, label, hint, error, className, style, children }: Props) {
  const errorId = error ? `${id}-error` : undefined;
  const hintId = hint ? `${id}-hint` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(' ');
  return (
    <div className={className ? `field ${className}` : 'field'} style={style}>
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(error ? { 'aria-invalid': true } : {}), ...(describedBy ? { 'aria-describedby': describedBy } : {}) })}
      {error && (
        <p id={errorId} className="error small">
          {error}
        </p>
      )}
      {hint && (
        <p id={hintId} className="muted small">
          {hint}
        </p>
      )}
    </div>
  );
}

interface Issue {
  field?: unknown;
  message?: unknown;
}

/**
 * The API's answer as messages by field. The routes' own checks (400) and taken names (409) name one field
 * (`details.field`, the message is the error's); schema validation lists `details.issues` as `{field: "body.quota.max_nodes", message}`. Each
 * message is also filed under its parents ("quota.max_nodes" under "quota"), so a form finds it by the name it uses.
 */
export function fieldErrors(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError)) return {};
  const out: Record<string, string> = {};
  const file = (path: string, message: string) => {
    const parts = path.split('.');
    for (let i = parts.length; i > 0; i--) {
      const key = parts.slice(0, i).join('.');
      out[key] ??= message;
    }
  };
  if (typeof err.details.field === 'string') file(err.details.field, err.message);
  const issues = err.details.issues;
  if (Array.isArray(issues)) {
    for (const issue of issues as Issue[]) {
      if (typeof issue.field !== 'string' || typeof issue.message !== 'string') continue;
      file(issue.field.replace(/^(body|query|path)\./, ''), issue.message);
    }
  }
  return out;
}

/** Whether an error is explained next to one of `fields` (otherwise the form shows it as a whole). */
export function explainedByFields(err: unknown, fields: readonly string[]): boolean {
  const errors = fieldErrors(err);
  return fields.some((f) => errors[f] !== undefined);
}
