/**
 * Ironic's project-scoped RBAC matrix (ironic/tests/unit/api/test_rbac_project_scoped.yaml, shipped with Debian's
 * python3-ironic): the node entries of its owner, lessee and third-party personas, and what each one expects.
 *
 * In Ironic's own test the conductor is mocked away, so "allowed" shows as 503 there. Against a real Ironic an
 * allowed request runs, and Ironic may answer anything (202, 400 for a state it cannot take, 409 locked...): what
 * the replay compares is the *decision* — denied (403), hidden (404), or passed through to Ironic.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const MATRIX_PATH = '/usr/lib/python3/dist-packages/ironic/tests/unit/api/test_rbac_project_scoped.yaml';

export const PERSONAS = [
  'owner-admin',
  'owner-manager',
  'owner-member',
  'owner-reader',
  'lessee-admin',
  'lessee-manager',
  'lessee-member',
  'lessee-reader',
  'third-party-admin',
] as const;
export type Persona = (typeof PERSONAS)[number];

export type Decision = 'allowed' | 'denied' | 'hidden';

export interface MatrixEntry {
  readonly name: string;
  readonly persona: Persona;
  readonly method: 'get' | 'put' | 'post' | 'patch' | 'delete';
  /** With `{placeholders}` as in the file. */
  readonly path: string;
  readonly body?: unknown;
  readonly expected: Decision;
  readonly assertStatus: number;
  readonly listLength?: Readonly<Record<string, number>>;
  readonly dictContains?: Readonly<Record<string, unknown>>;
  /** Ironic's `project_admin_can_manage_own_nodes`; entries written for `false` carry `false`. */
  readonly selfManageNodes?: boolean;
  readonly skipReason?: string;
}

interface RawEntry {
  path: string;
  method: MatrixEntry['method'];
  headers?: Record<string, string>;
  body?: unknown;
  assert_status: number;
  assert_list_length?: Record<string, number>;
  assert_dict_contains?: Record<string, unknown>;
  self_manage_nodes?: boolean;
  skip_reason?: string;
}

export function decisionOf(status: number): Decision {
  if (status === 403) return 'denied';
  if (status === 404) return 'hidden';
  return 'allowed'; // 503 (the mocked conductor) or a 2xx
}

/** The owner, lessee and third-party entries on /v1/nodes..., in file order. */
export function loadNodeEntries(path = MATRIX_PATH): MatrixEntry[] {
  if (!existsSync(path)) throw new Error(`Ironic's RBAC matrix is not at ${path} (python3-ironic installs it)`);
  // The file repeats a few names; Ironic's test (PyYAML) keeps the last one, as does uniqueKeys: false.
  const doc = parse(readFileSync(path, 'utf8'), { uniqueKeys: false }) as Record<string, RawEntry>;
  const out: MatrixEntry[] = [];
  for (const [name, raw] of Object.entries(doc)) {
    if (name === 'values' || !raw.path.startsWith('/v1/nodes')) continue;
    const persona = (raw.headers?.['X-Auth-Token'] ?? '').replace(/-token$/, '') as Persona;
    if (!PERSONAS.includes(persona)) continue;
    out.push({
      name,
      persona,
      method: raw.method,
      path: raw.path,
      ...(raw.body === undefined ? {} : { body: raw.body }),
      expected: decisionOf(raw.assert_status),
      assertStatus: raw.assert_status,
      ...(raw.assert_list_length ? { listLength: raw.assert_list_length } : {}),
      ...(raw.assert_dict_contains ? { dictContains: raw.assert_dict_contains } : {}),
      ...(raw.self_manage_nodes === undefined ? {} : { selfManageNodes: raw.self_manage_nodes }),
      ...(raw.skip_reason ? { skipReason: raw.skip_reason } : {}),
    });
  }
  return out;
}

export function fillPath(path: string, values: Readonly<Record<string, string>>): string {
  return path.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`no value for {${key}} in ${path}`);
    return value;
  });
}
