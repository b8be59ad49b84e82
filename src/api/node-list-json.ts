import type { EntryDeps } from '../access/entry-deps.js';
import type { Principal } from '../domain/identity.js';
import type { NodeView } from '../domain/inventory.js';
import { nodeAccess } from '../domain/policy.js';
import { LeasesInForce } from '../leasing/leases-in-force.js';
import type { Page, PageRequest } from '../store/page.js';
import type { LeaseInForce, NodeFilter, NodeVisibility } from '../store/store.js';
import { nodeJson, nodeLeaseJson } from './serializers.js';

/**
 * A node's JSON as UTF-8 with `"lease":null`, and where that `null` starts: the lease is the only part of a listed
 * node that depends on the moment; a leased node's copy is cut there (views of the same bytes, no copy).
 */
interface Copy {
  readonly bytes: Buffer;
  readonly at: number;
}

interface Serialized {
  readonly version: string;
  readonly node: NodeView;
  /** For the operator and the owner, then for a lessee (errors and reasons redacted): made when first asked. */
  full?: Copy;
  redacted?: Copy;
}

const NULL = Buffer.from('null');

/** A listed node's JSON as UTF-8: one buffer, or parts to be joined in order. */
export type NodeBytes = Buffer | readonly Buffer[];

/**
 * Past this many nodes the copies are dropped and made again: bounds memory (≈ 1 KB of JSON and a view per node)
 * for an inventory far above the 10,000 nodes measured.
 */
const MAX_ENTRIES = 60_000;

/**
 * The node list as JSON text, from this replica's copies of nodes it has serialized before. A page first reads
 * ids and row versions (Store.listNodeVersions, one query) and the lease in force now on each with its project's
 * name (this replica's LeasesInForce: one query when nothing changed), then whole rows for the nodes whose version
 * changed; a node unchanged since it was last listed costs two string concatenations. The version check makes
 * every page as current as a read of the table (a copy is never trusted without it), on any number of replicas.
 *
 * Measured at 10,000 nodes on PostgreSQL (2 cores): a whole list of 10 pages took ≈ 300 ms of CPU, of which row
 * parsing, `toNodeView`, building the response objects and `JSON.stringify` were ≈ 100 ms and garbage
 * collection ≈ 75 ms; the bench's figures are in docs/benchmarks.md.
 */
export class NodeListJson {
  private readonly copies = new Map<string, Serialized>();
  private readonly leases: LeasesInForce;
  private readonly leaseJson = new WeakMap<LeaseInForce, Buffer>();

  constructor(private readonly deps: EntryDeps) {
    this.leases = new LeasesInForce(deps.store);
  }

  /**
   * One page: each node's JSON as UTF-8 (the caller joins them into the body, see listBody) and the page's marker.
   * Bytes rather than text: a response made from an 8.5 MB string is encoded to UTF-8 again for every page
   * (measured at 10,000 nodes on PostgreSQL: ≈ 10 ms of a whole list's ≈ 120 ms in the server, with measuring its
   * byte length), where the copies are encoded once.
   */
  async page(principal: Principal, filter: NodeFilter, visibility: NodeVisibility, request: PageRequest): Promise<Page<NodeBytes>> {
    const { store, clock } = this.deps;
    const versionsRead = store.listNodeVersions(filter, visibility, request);
    const leases = await this.leases.at(versionsRead.then((v) => v.items.map((item) => item.id)), clock.now());
    const versions = await versionsRead;
    const stale = versions.items.filter((v) => this.copies.get(v.id)?.version !== v.version).map((v) => v.id);
    const fresh = stale.length > 0 ? await store.nodeViewsByIds(stale) : [];
    if (this.copies.size + fresh.length > MAX_ENTRIES) this.copies.clear();
    for (const { node, version } of fresh) this.copies.set(node.id, { node, version });

    const items: NodeBytes[] = [];
    versions.items.forEach(({ id }, i) => {
      // A node written between the two reads: its newer row is what we have; it is listed as read.
      const copy = this.copies.get(id);
      if (!copy) return;
      const inForce = leases[i]!;
      const { lease } = inForce;
      const access = nodeAccess(principal, copy.node, lease !== null && lease.project_id === principal.projectId) ?? 'lessee';
      const { bytes, at } = access === 'lessee' ? (copy.redacted ??= serialize(copy.node, true)) : (copy.full ??= serialize(copy.node, false));
      if (!lease) {
        items.push(bytes);
        return;
      }
      // The lease's JSON is made once per answer this replica keeps (leases-in-force.ts), not once per listing.
      let leaseJson = this.leaseJson.get(inForce);
      if (!leaseJson) {
        leaseJson = Buffer.from(JSON.stringify(nodeLeaseJson({ ...lease, project_name: inForce.lessee_name ?? lease.project_id })));
        this.leaseJson.set(inForce, leaseJson);
      }
      // In three parts, joined once with the whole page (listBody): no copy of the node's bytes per node.
      items.push([bytes.subarray(0, at), leaseJson, bytes.subarray(at + NULL.length)]);
    });
    return { items, nextMarker: versions.nextMarker };
  }
}

/** The node's JSON with no lease, and where its `lease` value is: the last `"lease":null` is the top-level one. */
function serialize(node: NodeView, redacted: boolean): Copy {
  const bytes = Buffer.from(JSON.stringify(nodeJson(node, { access: redacted ? 'lessee' : 'admin', lease: null })));
  return { bytes, at: bytes.lastIndexOf('"lease":null') + '"lease":'.length };
}

const OPEN = Buffer.from('{"nodes":[');
const COMMA = Buffer.from(',');

/** The list's body, `{"nodes":[…],"next":…}`, from a page's nodes (NodeListJson.page) and its next link. */
export function listBody(nodes: readonly NodeBytes[], next: string | null): Buffer<ArrayBuffer> {
  const parts: Buffer[] = [OPEN];
  nodes.forEach((node, i) => {
    if (i > 0) parts.push(COMMA);
    if (Buffer.isBuffer(node)) parts.push(node);
    else parts.push(...node);
  });
  parts.push(Buffer.from(`],"next":${JSON.stringify(next)}}`));
  return Buffer.concat(parts);
}
