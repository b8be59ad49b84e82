import { useState, type FormEvent } from 'react';
import { useSession } from '../auth/session';

export function SignInPage({ notice }: { notice?: string | undefined }) {
  const { signIn } = useSession();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const problem = await signIn(token);
    setBusy(false);
    if (problem) setError(problem);
  }

  return (
    <main className="centered">
      <form className="card sign-in" onSubmit={submit} aria-describedby="sign-in-help">
        <h1>Sign in to Leasehold</h1>
        {notice && !error && <p className="notice" role="status">{notice}</p>}
        <label htmlFor="token">Token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="current-password"
          spellCheck={false}
          autoFocus
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-errormessage={error ? 'sign-in-error' : undefined}
        />
        {error && <p id="sign-in-error" className="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        <p id="sign-in-help" className="muted small">
          An API token (<code>lh_…</code>), e.g. from <code>leasehold token create</code>. It is kept in this tab
          only and forgotten when the tab closes.
        </p>
      </form>
    </main>
  );
}
