import { useState } from 'react';
import { unwrap } from '../api/errors';
import { useResource } from '../api/use-resource';
import { useSession } from '../auth/session';
import { AppCredentialSignIn } from '../components/app-credential-sign-in';
import { PasswordSignIn } from '../components/password-sign-in';
import { Tabs, type TabItem } from '../components/tabs';
import { TokenSignIn } from '../components/token-sign-in';

type Method = 'password' | 'application_credential' | 'token';

const TABS: readonly TabItem<Method>[] = [
  { key: 'password', label: 'User & password' },
  { key: 'application_credential', label: 'Application credential' },
  { key: 'token', label: 'Paste a token' },
];

const LOCAL_HELP = (
  <>
    An API token (<code>lh_…</code>), e.g. from <code>leasehold token create</code>. It is kept in this tab only and
    forgotten when the tab closes.
  </>
);
const KEYSTONE_TOKEN_HELP = (
  <>
    A Keystone token, e.g. from <code>openstack token issue</code>. It is kept in this tab only and forgotten when the
    tab closes.
  </>
);

/**
 * How to sign in is the server's to say (GET /v1/auth/methods, no token): a Leasehold token under local identity,
 * and under Keystone a user name and password, an application credential, or a token. An answer that does not
 * come (an older server, a network failure) leaves the token form, which says what is wrong when it is used.
 */
export function SignInPage({ notice }: { notice?: string | undefined }) {
  const { publicApi } = useSession();
  const methods = useResource(async (signal) => unwrap(await publicApi.GET('/v1/auth/methods', { signal })), []);
  const [tab, setTab] = useState<Method>('password');
  // The first field takes the focus when the page opens, not when the arrow keys move between the tabs.
  const [tabMoved, setTabMoved] = useState(false);
  const [attempted, setAttempted] = useState(false);
  const onAttempt = () => setAttempted(true);

  const offered = methods.data?.methods ?? ['token'];
  const tabs = TABS.filter((t) => offered.includes(t.key));
  const keystone = methods.data?.identity === 'keystone' && tabs.length > 1;
  const selected = tabs.some((t) => t.key === tab) ? tab : tabs[0]!.key;

  return (
    <main className="centered">
      <div className={keystone ? 'card sign-in wide' : 'card sign-in'} aria-busy={methods.loading || undefined}>
        <h1>Sign in to Leasehold</h1>
        {notice && !attempted && <p className="notice" role="status">{notice}</p>}
        {methods.loading ? (
          <p className="muted">Loading…</p>
        ) : keystone ? (
          <>
            <p className="muted small">With your OpenStack account: Leasehold asks Keystone and keeps only the token it gives, in this tab, until the tab closes or the token expires.</p>
            <Tabs
              id="sign-in"
              label="Sign in with"
              items={tabs}
              selected={selected}
              onSelect={(key) => {
                setTab(key);
                setTabMoved(true);
              }}
            >
              {selected === 'password' && <PasswordSignIn autoFocus={!tabMoved} onAttempt={onAttempt} />}
              {selected === 'application_credential' && <AppCredentialSignIn autoFocus={!tabMoved} onAttempt={onAttempt} />}
              {selected === 'token' && <TokenSignIn autoFocus={!tabMoved} onAttempt={onAttempt} help={KEYSTONE_TOKEN_HELP} />}
            </Tabs>
          </>
        ) : (
          <TokenSignIn autoFocus onAttempt={onAttempt} help={LOCAL_HELP} />
        )}
      </div>
    </main>
  );
}
