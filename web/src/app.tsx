import { Redirect, Route, Switch } from 'wouter';
import { useSession } from './auth/session';
import { Layout } from './components/layout';
import { NotFoundPage } from './pages/not-found-page';
import { SignInPage } from './pages/sign-in-page';
import { HOME, ROUTES } from './routes';

/** Signed out: the sign-in page, whatever the path (the path is kept, so a shared link works after signing in). */
export function App() {
  const { state, retry, signOut } = useSession();
  if (state.status === 'checking') {
    return (
      <main className="centered" aria-busy="true">
        <p className="muted">Checking your session…</p>
      </main>
    );
  }
  if (state.status === 'unreachable') {
    return (
      <main className="centered">
        <div className="card" role="alert">
          <h1>Leasehold is not answering</h1>
          <p>{state.message}</p>
          <div className="row">
            <button type="button" onClick={retry}>Try again</button>
            <button type="button" className="secondary" onClick={() => signOut()}>Sign out</button>
          </div>
        </div>
      </main>
    );
  }
  if (state.status === 'signed-out') return <SignInPage notice={state.notice} />;

  const { viewer } = state;
  return (
    <Layout viewer={state.viewer}>
      {/* A new token (another project) mounts the pages afresh: each loads its data again, with the new token. */}
      <Switch key={state.generation}>
        <Route path="/">
          <Redirect to={HOME} replace />
        </Route>
        {/* Every route stays in the table, in its place: one not for this viewer is "not found" rather than left out,
            which would let its path fall through to a later pattern (/leases/new to /leases/:id, as the lease "new"). */}
        {ROUTES.map(({ path, page, audience }) => (
          <Route key={path} path={path} component={audience(viewer) ? page : NotFoundPage} />
        ))}
        <Route component={NotFoundPage} />
      </Switch>
    </Layout>
  );
}
