import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { Route, Router, Switch } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { SessionProvider, useSession } from '../src/auth/session';
import { LeaseRequestPage } from '../src/pages/lease-request-page';
import { TimelinePage } from '../src/pages/timeline-page';

function SignedIn({ children }: { children: ReactNode }) {
  const { state } = useSession();
  return state.status === 'signed-in' ? <>{children}</> : null;
}

/**
 * The timeline and the lease request form as the app mounts them (signed in with a stored token, wouter with a
 * memory location that records where the pages navigate), without the rest of the route table.
 */
export function renderPages(path: string, fetch: typeof globalThis.fetch) {
  const location = memoryLocation({ path, record: true });
  sessionStorage.setItem('leasehold.token', 'lh_t');
  render(
    <SessionProvider fetch={fetch}>
      <Router hook={location.hook} searchHook={location.searchHook}>
        <SignedIn>
          <Switch>
            <Route path="/timeline" component={TimelinePage} />
            <Route path="/leases/new" component={LeaseRequestPage} />
            <Route>elsewhere</Route>
          </Switch>
        </SignedIn>
      </Router>
    </SessionProvider>,
  );
  return location;
}
