import { Field } from './field';

/** An instant as the value of <input type="datetime-local"> read as UTC ("2030-01-01T09:00"). */
export function isoToUtcInput(iso: string | number): string {
  return new Date(iso).toISOString().slice(0, 16);
}

/** A datetime-local value read as UTC, as RFC 3339; null when empty or not a time. */
export function utcInputToIso(value: string): string | null {
  if (!value) return null;
  const ms = Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** The viewer's zone name, e.g. "Europe/Berlin". */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** "Wed, 1 Jan 2030, 10:00" in the viewer's zone. */
export function formatLocalLong(iso: string): string {
  return new Date(iso).toLocaleString(undefined, {
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
}

interface Props {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** What an empty field means ("now", "open-ended"). */
  emptyMeaning: string;
  error?: string | undefined;
}

/**
 * A time entered in UTC (what the API speaks and what owners agree on across sites), with the same instant in the
 * viewer's own zone alongside, so nobody has to convert in their head.
 */
export function UtcTimeField({ id, label, value, onChange, emptyMeaning, error }: Props) {
  const iso = utcInputToIso(value);
  const hint = iso ? (
    <>
      Your time: <time dateTime={iso}>{formatLocalLong(iso)}</time> ({localZone()})
    </>
  ) : (
    `Empty: ${emptyMeaning}.`
  );
  return (
    <Field id={id} label={`${label} (UTC)`} hint={hint} error={error}>
      {(control) => <input {...control} type="datetime-local" value={value} onChange={(e) => onChange(e.target.value)} />}
    </Field>
  );
}
