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

  const routes = ROUTES.filter((r) => r.audience(state.viewer));
  return (
    <Layout viewer={state.viewer}>
      {/* A new token (another project) mounts the pages afresh: each loads its data again, with the new token. */}
      <Switch key={state.generation}>
        <Route path="/">
          <Redirect to={HOME} replace />
        </Route>
        {routes.map(({ path, page }) => (
          <Route key={path} path={path} component={page} />
        ))}
        <Route component={NotFoundPage} />
      </Switch>
    </Layout>
  );
}
