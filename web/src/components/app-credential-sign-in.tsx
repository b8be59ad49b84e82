import { useEffect, useRef, useState, type FormEvent } from 'react';
import { credentialErrors, isRefusal } from '../auth/credential-errors';
import { useSession } from '../auth/session';
import { useAction } from '../lib/use-action';
import { ErrorNotice } from './error-notice';
import { Field } from './field';

/**
 * A Keystone application credential (its id and secret, as `openstack application credential create` printed
 * them), sent once to POST /v1/auth/tokens. The token it gives is for the credential's own project. The secret
 * lives in this form's state only, and is emptied when Keystone refuses it.
 */
export function AppCredentialSignIn({ autoFocus, onAttempt }: { autoFocus: boolean; onAttempt: () => void }) {
  const { signInWith } = useSession();
  const [id, setId] = useState('');
  const [secret, setSecret] = useState('');
  const [missing, setMissing] = useState<Record<string, string>>({});
  const action = useAction();
  const idField = useRef<HTMLInputElement>(null);
  const secretField = useRef<HTMLInputElement>(null);
  const errors = credentialErrors(action.error, 'application_credential.secret');
  const fields = { ...errors.fields, ...missing };

  useEffect(() => {
    if (!isRefusal(action.error)) return;
    // The refused secret is not kept (nor shown back): it is typed again, where the API's message is read.
    setSecret('');
    secretField.current?.focus();
  }, [action.error]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    onAttempt();
    const empty: Record<string, string> = {};
    if (!id.trim()) empty['application_credential.id'] = 'Enter the application credential’s ID.';
    if (!secret) empty['application_credential.secret'] = 'Enter its secret.';
    setMissing(empty);
    if (Object.keys(empty).length > 0) {
      action.clear();
      (empty['application_credential.id'] ? idField : secretField).current?.focus();
      return;
    }
    await action.run(() => signInWith({ application_credential: { id: id.trim(), secret } }));
  }

  return (
    <form onSubmit={submit} className="sign-in-form" noValidate>
      <Field id="ac-id" label="Application credential ID" error={fields['application_credential.id']}>
        {(control) => (
          <input
            {...control}
            ref={idField}
            name="application-credential-id"
            autoComplete="off"
            autoCapitalize="off"
            spellCheck={false}
            autoFocus={autoFocus}
            value={id}
            onChange={(e) => setId(e.target.value)}
          />
        )}
      </Field>
      <Field id="ac-secret" label="Secret" error={fields['application_credential.secret']}>
        {(control) => (
          <input
            {...control}
            ref={secretField}
            name="application-credential-secret"
            type="password"
            autoComplete="off"
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
          />
        )}
      </Field>
      {errors.form !== undefined && <ErrorNotice error={errors.form} title="Not signed in" />}
      <button type="submit" disabled={action.busy}>{action.busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  );
}
