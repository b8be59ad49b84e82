import { useState, type FormEvent, type ReactNode } from 'react';
import { useSession } from '../auth/session';

/** A token pasted as it is: a Leasehold token (local identity) or a Keystone token, checked with GET /v1/me. */
export function TokenSignIn({ autoFocus, onAttempt, help }: { autoFocus: boolean; onAttempt: () => void; help: ReactNode }) {
  const { signIn } = useSession();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    onAttempt();
    setBusy(true);
    setError(null);
    const problem = await signIn(token);
    setBusy(false);
    if (problem) setError(problem);
  }

  return (
    <form className="sign-in-form" onSubmit={submit} aria-describedby="sign-in-help">
      <label htmlFor="token">Token</label>
      <input
        id="token"
        name="token"
        type="password"
        autoComplete="current-password"
        spellCheck={false}
        autoFocus={autoFocus}
        required
        value={token}
        onChange={(e) => setToken(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-errormessage={error ? 'sign-in-error' : undefined}
      />
      {error && <p id="sign-in-error" className="error" role="alert">{error}</p>}
      <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      <p id="sign-in-help" className="muted small">{help}</p>
    </form>
  );
}
