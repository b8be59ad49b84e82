import { networkActor } from '../access/network-actor.js';
import type { EntryDeps } from '../access/entry-deps.js';
import type { IronicForwarder } from '../access/ironic-forwarder.js';
import type { NodeInView } from '../access/node-access.js';
import { ForbiddenError, NotFoundError } from '../domain/errors.js';
import type { Principal } from '../domain/identity.js';
import { faultstring } from '../drivers/ironic/ironic-errors.js';

export interface VifCall {
  readonly method: string;
  /** `vifs` or `vifs/{vif}`. */
  readonly sub: string;
  readonly body: string | undefined;
  readonly microversion: string | null;
}

export type Forwarded = Awaited<ReturnType<IronicForwarder['forward']>>;

/**
 * Ironic's `vifs` for a project, with Leasehold's ownership check: Ironic attaches with Leasehold's service
 * credentials, so it would plug in any port it can see — another tenant's too. A port must be the caller's
 * project's (or the answer is Ironic's own 404 for a port it cannot find); the attachment is recorded, so the end of
 * the lease takes it off like one made through the REST API. A list shows a lessee its own project's VIFs only.
 * Returns null for a call it leaves to the plain forward (the operator's).
 */
export async function projectVifCall(
  deps: EntryDeps,
  ironic: IronicForwarder,
  principal: Principal,
  ident: string,
  found: NodeInView,
  call: VifCall,
): Promise<Forwarded | null> {
  if (found.subject.is_admin) return null;
  const service = deps.networks;
  const nodePath = `/v1/nodes/${found.node.id}`;
  if (call.method === 'POST' && call.sub === 'vifs') {
    const actor = networkActor(deps, principal, ident, found, 'baremetal:node:vif:attach');
    if (!service) throw new ForbiddenError(`${deps.networksOff ?? 'tenant networks are not configured here'}: VIFs cannot be checked, so none is attached for a project`);
    const portId = vifIdOf(call.body);
    if (portId === null) return null; // Ironic answers the malformed body in its own words
    const row = await service.admitVif(actor, portId);
    const res = await ironic.forward('POST', `${nodePath}/vifs`, { body: call.body, microversion: call.microversion, guard: actor.guard });
    await service.settleVif(actor, row, res.status < 300, res.status < 300 ? null : faultstring(res.text));
    return res;
  }
  if (call.method === 'DELETE' && call.sub.startsWith('vifs/') && service) {
    const actor = networkActor(deps, principal, ident, found, 'baremetal:node:vif:detach');
    const vif = decodeURIComponent(call.sub.slice('vifs/'.length));
    if (!actor.owner) {
      const port = await service.backend.getPort(vif);
      if (port && port.project_id !== actor.project_id) throw new NotFoundError('VIF', vif);
    }
    const row = await deps.store.networks.byPort(vif);
    if (row && row.node_id === found.node.id) {
      // Leasehold's own attachment: ended as through the REST API (its port deleted if Leasehold made it).
      await service.detach(actor, row.id);
      return { status: 204, text: '', headers: new Headers() };
    }
    return null;
  }
  if (call.method === 'GET' && call.sub === 'vifs' && service && found.access === 'lessee') {
    const res = await ironic.forward('GET', `${nodePath}/vifs`, { microversion: call.microversion });
    if (res.status >= 300) return res;
    const doc = JSON.parse(res.text) as { vifs?: Array<{ id?: string }> };
    const ids = (doc.vifs ?? []).flatMap((v) => (typeof v.id === 'string' ? [v.id] : []));
    const ports = await service.backend.getPorts(ids);
    const mine = (doc.vifs ?? []).filter((v) => typeof v.id === 'string' && ports.get(v.id)?.project_id === principal.projectId);
    return { status: res.status, text: JSON.stringify({ ...doc, vifs: mine }), headers: res.headers };
  }
  return null;
}

/** The port id of Ironic's VIF attach body (`{"id": ...}`), or null when the body is not one. */
function vifIdOf(body: string | undefined): string | null {
  try {
    const id = (JSON.parse(body ?? '') as { id?: unknown } | null)?.id;
    return typeof id === 'string' && id !== '' ? id : null;
  } catch {
    return null;
  }
}
