import { Field, type FieldControl } from './field';

/** The offer form's extension policy, as text the API parses (ISO 8601 or short durations); empty: not set. */
export interface ExtensionDraft {
  window: string;
  ahead: string;
  total: string;
}
export const EMPTY_EXTENSION: ExtensionDraft = { window: '', ahead: '', total: '' };

/** The body fields of POST /v1/offers for the draft (only those given). */
export function extensionBody(d: ExtensionDraft): { extension_window?: string; extension_max_ahead?: string; max_total_length?: string } {
  return {
    ...(d.window.trim() ? { extension_window: d.window.trim() } : {}),
    ...(d.ahead.trim() ? { extension_max_ahead: d.ahead.trim() } : {}),
    ...(d.total.trim() ? { max_total_length: d.total.trim() } : {}),
  };
}

/**
 * How lessees may extend their leases by themselves (issue 16): only within a window before the end, at most so far
 * ahead of now, and never past a total length (Chameleon: 2d, 7d, 14d).
 */
export function ExtensionPolicyFields({ draft, onChange, errors }: { draft: ExtensionDraft; onChange: (d: ExtensionDraft) => void; errors: Record<string, string | undefined> }) {
  const input = (key: keyof ExtensionDraft) => (control: FieldControl) => (
    <input {...control} value={draft[key]} onChange={(e) => onChange({ ...draft, [key]: e.target.value })} spellCheck={false} autoCapitalize="off" />
  );
  return (
    <div className="row" style={{ alignItems: 'flex-start' }}>
      <Field id="offer-ext-window" label="Extension window" hint="e.g. 2d: lessees extend only within 2 days of the end; empty: any time" error={errors.extension_window}>
        {input('window')}
      </Field>
      <Field id="offer-ext-ahead" label="Extend at most ahead" hint="e.g. 7d: no further than 7 days from now; empty: no limit" error={errors.extension_max_ahead}>
        {input('ahead')}
      </Field>
      <Field id="offer-ext-total" label="Longest in total" hint="e.g. 14d, extensions included; empty: the longest lease" error={errors.max_total_length}>
        {input('total')}
      </Field>
    </div>
  );
}
