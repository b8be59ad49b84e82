import { BackendUnavailableError } from '../../domain/errors.js';

/** `lessee` appeared in 1.65: below it Leasehold cannot record who holds a node. */
export const MIN_MICROVERSION = '1.65';
/** The newest microversion this driver has been written and tested against. */
export const MAX_KNOWN_MICROVERSION = '1.82';
export const VERSION_HEADER = 'X-OpenStack-Ironic-API-Version';

export interface Microversion {
  readonly major: number;
  readonly minor: number;
}

export function parseMicroversion(text: unknown): Microversion | null {
  if (typeof text !== 'string') return null;
  const m = /^\s*(\d+)\.(\d+)\s*$/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : null;
}

export function compareMicroversions(a: Microversion, b: Microversion): number {
  return a.major - b.major || a.minor - b.minor;
}

export function formatMicroversion(v: Microversion): string {
  return `${v.major}.${v.minor}`;
}

/** What the server says it supports (from `GET /`: the `v1` entry of `versions`, or the response headers). */
export interface ServerVersions {
  readonly min: Microversion;
  readonly max: Microversion;
}

export function serverVersions(body: unknown, headers: Headers): ServerVersions | null {
  const entries = Array.isArray((body as { versions?: unknown } | null)?.versions)
    ? ((body as { versions: unknown[] }).versions as unknown[])
    : [];
  const candidates: unknown[] = [
    ...entries.filter((e) => (e as { id?: unknown } | null)?.id === 'v1'),
    (body as { default_version?: unknown } | null)?.default_version,
    (body as { version?: unknown } | null)?.version, // `GET /v1`: {"id": "v1", "version": {...}, ...}
    body,
  ];
  for (const c of candidates) {
    const entry = c as { version?: unknown; min_version?: unknown } | null | undefined;
    const max = parseMicroversion(entry?.version);
    const min = parseMicroversion(entry?.min_version);
    if (max && min) return { min, max };
  }
  const max = parseMicroversion(headers.get('x-openstack-ironic-api-maximum-version'));
  const min = parseMicroversion(headers.get('x-openstack-ironic-api-minimum-version'));
  return max && min ? { min, max } : null;
}

/** The microversion to use: the highest both sides know. Refuses a server too old (or too new) to talk to. */
export function chooseMicroversion(server: ServerVersions, url: string): string {
  const floor = parseMicroversion(MIN_MICROVERSION) as Microversion;
  const ceiling = parseMicroversion(MAX_KNOWN_MICROVERSION) as Microversion;
  const chosen = compareMicroversions(server.max, ceiling) < 0 ? server.max : ceiling;
  const range = `${formatMicroversion(server.min)}–${formatMicroversion(server.max)}`;
  if (compareMicroversions(chosen, floor) < 0) {
    throw new BackendUnavailableError(
      `Ironic at ${url} supports API microversions up to ${formatMicroversion(server.max)}; Leasehold needs at least ` +
        `${MIN_MICROVERSION} (node lessee). Upgrade Ironic (Wallaby or newer)`,
      { details: { url, server: range, required: MIN_MICROVERSION } },
    );
  }
  if (compareMicroversions(chosen, server.min) < 0) {
    throw new BackendUnavailableError(
      `Ironic at ${url} requires API microversion ${formatMicroversion(server.min)} or newer; Leasehold knows up to ` +
        `${MAX_KNOWN_MICROVERSION}`,
      { details: { url, server: range, known: MAX_KNOWN_MICROVERSION } },
    );
  }
  return formatMicroversion(chosen);
}
