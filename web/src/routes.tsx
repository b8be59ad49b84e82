import { audiences, type AppRoute } from './nav';
import { AdminEventsPage } from './pages/admin-events-page';
import { AdminProjectsPage } from './pages/admin-projects-page';
import { AdminUsersPage } from './pages/admin-users-page';
import { LeaseDetailPage } from './pages/lease-detail-page';
import { LeaseRequestPage } from './pages/lease-request-page';
import { LeasesPage } from './pages/leases-page';
import { MyNodesPage } from './pages/my-nodes-page';
import { NodeDetailPage } from './pages/node-detail-page';
import { NodesPage } from './pages/nodes-page';
import { OffersPage } from './pages/offers-page';
import { TimelinePage } from './pages/timeline-page';
import { UsagePage } from './pages/usage-page';

/**
 * Every page of the UI, in navigation order. To add one: write web/src/pages/<name>-page.tsx, add an entry here
 * (a `nav` label puts it in the navigation; `audience` decides who gets it). Register only pages that work.
 */
export const ROUTES: readonly AppRoute[] = [
  { path: '/nodes', page: NodesPage, audience: audiences.everyone, nav: 'Nodes' },
  { path: '/nodes/:id', page: NodeDetailPage, audience: audiences.everyone },
  { path: '/timeline', page: TimelinePage, audience: audiences.everyone, nav: 'Timeline' },
  { path: '/leases', page: LeasesPage, audience: audiences.everyone, nav: 'Leases' },
  // Before /leases/:id, which would take "new" for an id.
  { path: '/leases/new', page: LeaseRequestPage, audience: audiences.lessees, nav: 'Request a lease' },
  { path: '/leases/:id', page: LeaseDetailPage, audience: audiences.everyone },
  { path: '/offers', page: OffersPage, audience: audiences.owners, nav: 'Offers' },
  { path: '/my-nodes', page: MyNodesPage, audience: audiences.owners, nav: "My nodes' leases" },
  { path: '/usage', page: UsagePage, audience: audiences.everyone, nav: 'Usage' },
  { path: '/admin/projects', page: AdminProjectsPage, audience: audiences.admins, nav: 'Projects' },
  { path: '/admin/users', page: AdminUsersPage, audience: audiences.userAdmins, nav: 'Users & tokens' },
  { path: '/admin/events', page: AdminEventsPage, audience: audiences.admins, nav: 'Events' },
];

/** Where `/` and the sign-in lead. */
export const HOME = '/nodes';
