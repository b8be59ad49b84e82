import type { Offer } from '../api-types.js';
import { formatCount, formatDisk, formatEnd, formatLimit, formatMemory, formatWindow, shortId } from '../format.js';
import { renderTable } from '../output.js';

/** Who may lease from an offer: "any", "none", or the projects by name (the API sends them beside the ids: an owner cannot list other projects). */
export function allowedProjects(o: Offer): string {
  if (o.allowed_projects === null) return 'any';
  if (o.allowed_projects.length === 0) return 'none';
  return o.allowed_projects.map((id, i) => o.allowed_project_names?.[i] ?? id).join(', ');
}

/** An RFC 3339 UTC time to the minute, as the narrow table shows it: 2030-02-01 09:00. */
function minute(iso: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(iso) ? iso.slice(0, 16).replace('T', ' ') : iso;
}

/** The first free window of the offer: "now → open", "2030-02-01 00:00 → 2030-03-01 00:00" (wide: full times), or "none". */
function firstFree(o: Offer, now: Date, wide: boolean): string {
  const window = o.free_windows[0];
  if (!window) return 'none';
  if (wide) return formatWindow(window, now);
  return formatWindow({ start: Date.parse(window.start) <= now.getTime() ? window.start : minute(window.start), end: window.end && minute(window.end) }, now);
}

/** A node that has no name (or is gone) by its id: short in the narrow table. */
function nodeLabel(o: Offer, wide: boolean): string {
  return o.node_name ?? (wide ? o.node_id : shortId(o.node_id));
}

/** The hardware of the offered node (its facts as the API sends them; a server before node_facts shows dashes). */
function hardware(o: Offer): string[] {
  const facts = o.node_facts ?? {};
  return [formatMemory(facts.memory), formatCount(facts.cpus), formatCount(facts.gpus), formatDisk(facts.disk)];
}

/**
 * The offer table. Narrow (default) it fits 120 columns as `node list` does: a short id, the node's hardware —
 * what a lessee chooses by —, the longest lease, the status, the weekly windows (when an offer has them; their
 * summary can be long and then the table is wider) and the first free window to the minute. `--wide` adds
 * the full id, the architecture, the offer's own window and who may lease, with full times.
 */
export function offerTable(offers: readonly Offer[], now: Date, wide = false): string {
  // A WEEKLY column only when an offer of the page has weekly windows: most have none.
  const weekly = offers.some((o) => o.weekly_summary);
  const weeklyCell = (o: Offer) => (weekly ? [o.weekly_summary ?? 'always'] : []);
  if (wide) {
    return renderTable(
      ['ID', 'NODE', 'ARCH', 'MEMORY', 'CPUS', 'GPUS', 'DISK', 'START', 'END', 'MAX LEASE', 'ALLOWED', 'STATUS', ...(weekly ? ['WEEKLY'] : []), 'FREE'],
      offers.map((o) => [
        o.id,
        nodeLabel(o, true),
        formatCount(o.node_facts?.cpu_arch),
        ...hardware(o),
        o.start,
        formatEnd(o.end),
        formatLimit(o.max_lease_duration),
        allowedProjects(o),
        o.status,
        ...weeklyCell(o),
        firstFree(o, now, true),
      ]),
    );
  }
  return renderTable(
    ['ID', 'NODE', 'MEMORY', 'CPUS', 'GPUS', 'DISK', 'MAX LEASE', 'STATUS', ...(weekly ? ['WEEKLY'] : []), 'FREE (UTC)'],
    offers.map((o) => [shortId(o.id), nodeLabel(o, false), ...hardware(o), formatLimit(o.max_lease_duration), o.status, ...weeklyCell(o), firstFree(o, now, false)]),
  );
}
