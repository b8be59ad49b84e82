import { useEffect, useRef, useState, type FormEvent } from 'react';
import { credentialErrors, isRefusal } from '../auth/credential-errors';
import { useSession } from '../auth/session';
import { useAction } from '../lib/use-action';
import { ErrorNotice } from './error-notice';
import { Field } from './field';

/**
 * Keystone's user name and password (in a domain, for a project), sent once to POST /v1/auth/tokens: Leasehold
 * asks Keystone and answers the token. The password lives in this form's state only, and is emptied when
 * Keystone refuses it (the user name, domain and project stay, to try again).
 */
export function PasswordSignIn({ autoFocus, onAttempt }: { autoFocus: boolean; onAttempt: () => void }) {
  const { signInWith } = useSession();
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [domain, setDomain] = useState('Default');
  const [project, setProject] = useState('');
  const [missing, setMissing] = useState<Record<string, string>>({});
  const action = useAction();
  const passwordField = useRef<HTMLInputElement>(null);
  const userField = useRef<HTMLInputElement>(null);
  const errors = credentialErrors(action.error, 'password.password');
  const fields = { ...errors.fields, ...missing };

  useEffect(() => {
    if (!isRefusal(action.error)) return;
    // The refused password is not kept (nor shown back): it is typed again, where the API's message is read.
    setPassword('');
    passwordField.current?.focus();
  }, [action.error]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    onAttempt();
    const empty: Record<string, string> = {};
    if (!user.trim()) empty['password.user'] = 'Enter your user name.';
    if (!password) empty['password.password'] = 'Enter your password.';
    setMissing(empty);
    if (Object.keys(empty).length > 0) {
      action.clear();
      (empty['password.user'] ? userField : passwordField).current?.focus();
      return;
    }
    await action.run(() =>
      signInWith({
        password: {
          user: user.trim(),
          password,
          user_domain: domain.trim() || 'Default',
          ...(project.trim() ? { project: project.trim() } : {}),
        },
      }),
    );
  }

  return (
    <form onSubmit={submit} className="sign-in-form" noValidate>
      <Field id="ks-user" label="User name" error={fields['password.user']}>
        {(control) => (
          <input
            {...control}
            ref={userField}
            name="username"
            autoComplete="username"
            autoCapitalize="off"
            spellCheck={false}
            autoFocus={autoFocus}
            value={user}
            onChange={(e) => setUser(e.target.value)}
          />
        )}
      </Field>
      <Field id="ks-password" label="Password" error={fields['password.password']}>
        {(control) => (
          <input
            {...control}
            ref={passwordField}
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        )}
      </Field>
      <Field id="ks-domain" label="User domain" hint="Your OpenStack domain: usually Default." error={fields['password.user_domain']}>
        {(control) => (
          <input {...control} name="domain" autoCapitalize="off" spellCheck={false} value={domain} onChange={(e) => setDomain(e.target.value)} />
        )}
      </Field>
      <Field
        id="ks-project"
        label="Project"
        hint="Optional: its name. Empty: your default project. You can switch projects once signed in."
        error={fields['password.project'] ?? fields['password.project_domain']}
      >
        {(control) => (
          <input {...control} name="project" autoCapitalize="off" spellCheck={false} value={project} onChange={(e) => setProject(e.target.value)} />
        )}
      </Field>
      {errors.form !== undefined && <ErrorNotice error={errors.form} title="Not signed in" />}
      <button type="submit" disabled={action.busy}>{action.busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  );
}
