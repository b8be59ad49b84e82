import type { AuditEvent } from './leasing.js';

/** A uuid anywhere in a text (node and project ids in event messages). */
const UUID_IN_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * The ids an event names that a person would rather read as names: its node and project, and every uuid its
 * message mentions (the engine writes "node <uuid> handed to project <uuid>"; a sub-lease names a second project).
 */
export function idsMentioned(events: readonly Pick<AuditEvent, 'node_id' | 'project_id' | 'message'>[]): string[] {
  const ids = new Set<string>();
  for (const e of events) {
    if (e.node_id) ids.add(e.node_id);
    if (e.project_id) ids.add(e.project_id);
    for (const match of e.message.matchAll(UUID_IN_TEXT)) ids.add(match[0].toLowerCase());
  }
  return [...ids];
}

/**
 * The message with each id it names replaced by that thing's name, as people read it ("node gpu-a100-01 handed to
 * project physics-lab"). Ids without a known name stay, so nothing is lost; longer ids first, so one id that is a
 * part of another (a Keystone project id inside nothing else, but who knows) never cuts it in two.
 */
export function messageWithNames(message: string, names: ReadonlyMap<string, string | null>): string {
  const known = [...names].filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '');
  if (known.length === 0) return message;
  known.sort((a, b) => b[0].length - a[0].length);
  const byId = new Map(known.map(([id, name]) => [id.toLowerCase(), name]));
  const pattern = new RegExp(known.map(([id]) => escapeRegExp(id)).join('|'), 'gi');
  return message.replace(pattern, (id) => byId.get(id.toLowerCase()) ?? id);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
