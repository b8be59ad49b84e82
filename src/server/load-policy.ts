import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { InvalidRequestError } from '../domain/errors.js';
import { NodePolicy } from '../domain/policy-rules/node-policy.js';

/**
 * The node policy for this server: the defaults, or the defaults with the rules of the operator's YAML file
 * (`LEASEHOLD_POLICY_FILE`, in the style of Ironic's policy.yaml: `"rule name": "check string"`). Any mistake in the
 * file is an error naming the file, so the server does not start with a policy the operator did not mean.
 */
export async function loadPolicy(file: string | null): Promise<NodePolicy> {
  if (!file) return NodePolicy.defaults();
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
  if (doc === null || doc === undefined) return NodePolicy.defaults(); // an empty file changes nothing
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new InvalidRequestError(`LEASEHOLD_POLICY_FILE ${file}: must be a mapping of rule names to check strings`);
  }
  return NodePolicy.withOverrides(doc as Record<string, unknown>, `LEASEHOLD_POLICY_FILE ${file}`);
}
