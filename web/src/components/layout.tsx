import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { useSession } from '../auth/session';
import { activeNavPath, navFor, type Viewer } from '../nav';
import { ROUTES } from '../routes';
import { ProjectSwitcher } from './project-switcher';
import { SessionExpiry } from './session-expiry';

function NavLink({ path, label, active }: { path: string; label: string; active: boolean }) {
  return (
    <Link href={path} className={active ? 'nav-link active' : 'nav-link'} aria-current={active ? 'page' : undefined}>
      {label}
    </Link>
  );
}

export function Layout({ viewer, children }: { viewer: Viewer; children: ReactNode }) {
  const { signOut, state } = useSession();
  const expiresAt = state.status === 'signed-in' ? state.expiresAt : null;
  const [location] = useLocation();
  const items = navFor(ROUTES, viewer);
  const active = activeNavPath(items.map((i) => i.path), location);
  const who = viewer.project ? `${viewer.userName} · ${viewer.project.name} (${viewer.role})` : `${viewer.userName} (${viewer.role})`;
  return (
    <>
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="topbar">
        <Link href="/" className="brand">Leasehold</Link>
        <nav aria-label="Main" className="nav">
          {items.map((item) => (
            <NavLink key={item.path} path={item.path} label={item.label} active={item.path === active} />
          ))}
        </nav>
        <div className="who">
          <span className="muted" title="Signed in as">{who}</span>
          {viewer.identity === 'keystone' && <ProjectSwitcher viewer={viewer} />}
          {expiresAt && <SessionExpiry expiresAt={expiresAt} />}
          <button type="button" className="secondary small" onClick={() => signOut()}>Sign out</button>
        </div>
      </header>
      <main id="main" tabIndex={-1} className="content">
        {children}
      </main>
    </>
  );
}
