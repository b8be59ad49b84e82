import type { ReactNode } from 'react';
import { Link, useRoute } from 'wouter';
import { useSession } from '../auth/session';
import { navFor, type Viewer } from '../nav';
import { ROUTES } from '../routes';

function NavLink({ path, label }: { path: string; label: string }) {
  // A section stays highlighted on its detail pages (/leases/:id under /leases).
  const [active] = useRoute(`${path}/*?`);
  return (
    <Link href={path} className={active ? 'nav-link active' : 'nav-link'} aria-current={active ? 'page' : undefined}>
      {label}
    </Link>
  );
}

export function Layout({ viewer, children }: { viewer: Viewer; children: ReactNode }) {
  const { signOut } = useSession();
  const who = viewer.project ? `${viewer.userName} · ${viewer.project.name} (${viewer.role})` : `${viewer.userName} (${viewer.role})`;
  return (
    <>
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="topbar">
        <Link href="/" className="brand">Leasehold</Link>
        <nav aria-label="Main" className="nav">
          {navFor(ROUTES, viewer).map((item) => (
            <NavLink key={item.path} {...item} />
          ))}
        </nav>
        <div className="who">
          <span className="muted" title="Signed in as">{who}</span>
          <button type="button" className="secondary small" onClick={() => signOut()}>Sign out</button>
        </div>
      </header>
      <main id="main" tabIndex={-1} className="content">
        {children}
      </main>
    </>
  );
}
