import type { FactValue, NodeFacts } from './inventory.js';

const MIB = 2 ** 20;
const GIB = 2 ** 30;

/**
 * The facts requirement expressions are evaluated against, derived from Ironic's node fields:
 * - `memory` (bytes, from `memory_mb`), `disk` (bytes, from `local_gb`), `cpus`, `cpu_arch`, `gpus` (0 when the
 *   node says nothing: a node without a `gpus` property has none), `resource_class`;
 * - every other property under its own name (numbers stay numbers, numeric strings become numbers);
 * - each `capabilities` pair ("boot_mode:uefi,cpu_vt:true") under its key, unless a property already has it.
 * Traits are not facts: expressions test them with `has TRAIT`.
 */
export function deriveFacts(properties: Readonly<Record<string, unknown>>, resourceClass: string | null): NodeFacts {
  const facts: Record<string, FactValue> = {};
  for (const [key, raw] of Object.entries(properties)) {
    if (key === 'memory_mb' || key === 'local_gb' || key === 'capabilities') continue;
    const value = toFact(raw);
    if (value !== undefined) facts[key] = value;
  }
  const memoryMb = toNumber(properties.memory_mb);
  if (memoryMb !== undefined) facts.memory = memoryMb * MIB;
  const localGb = toNumber(properties.local_gb);
  if (localGb !== undefined) facts.disk = localGb * GIB;
  if (facts.gpus === undefined) facts.gpus = 0;
  if (resourceClass) facts.resource_class = resourceClass;
  for (const [key, value] of parseCapabilities(properties.capabilities)) {
    if (facts[key] === undefined) facts[key] = value;
  }
  return facts;
}

/** Ironic's capabilities: a "k:v,k:v" string (or, from some tools, an object). */
export function parseCapabilities(raw: unknown): ReadonlyArray<readonly [string, FactValue]> {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    return Object.entries(raw).flatMap(([k, v]) => {
      const value = toFact(v);
      return value === undefined ? [] : [[k, value] as const];
    });
  }
  if (typeof raw !== 'string') return [];
  return raw
    .split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair.includes(':'))
    .map((pair) => {
      const at = pair.indexOf(':');
      return [pair.slice(0, at).trim(), toFact(pair.slice(at + 1).trim()) ?? ''] as const;
    })
    .filter(([key]) => key !== '');
}

function toFact(raw: unknown): FactValue | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  if (typeof raw === 'boolean') return raw;
  if (typeof raw !== 'string') return undefined;
  const trimmed = raw.trim();
  if (trimmed !== '' && /^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  if (trimmed === 'true' || trimmed === 'false') return trimmed === 'true';
  return raw;
}

function toNumber(raw: unknown): number | undefined {
  const value = toFact(raw);
  return typeof value === 'number' && value >= 0 ? value : undefined;
}
