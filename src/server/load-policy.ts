import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { InvalidRequestError } from '../domain/errors.js';
import { DEFAULT_KEYSTONE_ROLES, type KeystoneRoleMap } from '../domain/identity-backend.js';
import { PROJECT_ROLES, Role } from '../domain/identity.js';
import { NodePolicy } from '../domain/policy-rules/node-policy.js';

/** The key of the policy file that maps Keystone's role names onto Leasehold's (not a node rule). */
const KEYSTONE_ROLES_KEY = 'keystone_roles';

/**
 * The node policy for this server: the defaults, or the defaults with the rules of the operator's YAML file
 * (`LEASEHOLD_POLICY_FILE`, in the style of Ironic's policy.yaml: `"rule name": "check string"`). Any mistake in the
 * file is an error naming the file, so the server does not start with a policy the operator did not mean.
 */
export async function loadPolicy(file: string | null): Promise<NodePolicy> {
  const doc = await readPolicyFile(file);
  if (doc === null) return NodePolicy.defaults(); // no file, or an empty one, changes nothing
  const { [KEYSTONE_ROLES_KEY]: _roles, ...rules } = doc;
  return NodePolicy.withOverrides(rules, `LEASEHOLD_POLICY_FILE ${file}`);
}

/**
 * Which Keystone roles stand for Leasehold's roles: each as it is named by default; the policy file's
 * `keystone_roles` may name others, e.g. `keystone_roles: {manager: [manager, project-admin], reader: [reader, observer]}`
 * (a role left out keeps its default).
 */
export async function loadKeystoneRoles(file: string | null): Promise<KeystoneRoleMap> {
  const doc = await readPolicyFile(file);
  const given = doc?.[KEYSTONE_ROLES_KEY];
  if (given === undefined || given === null) return DEFAULT_KEYSTONE_ROLES;
  const where = `LEASEHOLD_POLICY_FILE ${file}: ${KEYSTONE_ROLES_KEY}`;
  if (typeof given !== 'object' || Array.isArray(given)) throw new InvalidRequestError(`${where} must map Leasehold roles to Keystone role names`);
  const known: readonly string[] = [...PROJECT_ROLES, Role.Admin];
  const map: Record<string, readonly string[]> = { ...DEFAULT_KEYSTONE_ROLES };
  for (const [role, names] of Object.entries(given as Record<string, unknown>)) {
    if (!known.includes(role)) throw new InvalidRequestError(`${where}: "${role}" is not a Leasehold role (${known.join(', ')})`);
    const list = typeof names === 'string' ? [names] : names;
    if (!Array.isArray(list) || list.length === 0 || !list.every((n) => typeof n === 'string' && n.trim() !== '')) {
      throw new InvalidRequestError(`${where}.${role} must be a Keystone role name or a list of them`);
    }
    map[role] = list.map((n: string) => n.trim());
  }
  return map as KeystoneRoleMap;
}

/** The file as a mapping, or null without a file (or with an empty one). */
async function readPolicyFile(file: string | null): Promise<Record<string, unknown> | null> {
  if (!file) return null;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InvalidRequestError(`LEASEHOLD_POLICY_FILE ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new InvalidRequestError(`LEASEHOLD_POLICY_FILE ${file}: not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return null;
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new InvalidRequestError(`LEASEHOLD_POLICY_FILE ${file}: must be a mapping of rule names to check strings`);
  }
  return doc as Record<string, unknown>;
}
