import { ApiError } from '../api/errors';
import { fieldErrors } from '../components/field';

export interface CredentialErrors {
  /** Messages by field (the API's names: "password.user", "application_credential.secret"). */
  fields: Record<string, string>;
  /** What no field explains (Keystone unreachable: 503, too many attempts: 429, ...), for the form as a whole. */
  form: unknown;
}

/**
 * Where a sign-in's refusal is shown, in the API's words: a 401 (Keystone refused the credentials) under the
 * secret — the field the user types again —, a 400 under the fields it names, anything else for the whole form.
 */
export function credentialErrors(err: unknown, secretField: string): CredentialErrors {
  if (err === undefined) return { fields: {}, form: undefined };
  if (err instanceof ApiError && err.status === 401) return { fields: { [secretField]: err.message }, form: undefined };
  const fields = fieldErrors(err);
  return Object.keys(fields).length > 0 ? { fields, form: undefined } : { fields: {}, form: err };
}


/** Keystone refused the credentials: the secret is emptied, to be typed again. */
export function isRefusal(err: unknown): boolean {
  return err instanceof ApiError && err.status === 401;
}
