import { InvalidRequestError } from '../errors.js';
import { DEFAULT_RULES, type NodeRuleName } from './default-rules.js';
import { evaluateRule, parseRule, referencedRules, type PolicySubject, type RuleExpr } from './rule-expression.js';

/**
 * The node policy every entry point asks (REST API, the Ironic-compatible gateway, the console): the defaults
 * (default-rules.ts) with an operator's overrides. Built once at start; an invalid override — a malformed check,
 * an unknown `baremetal:` rule (a typo would silently change nothing), a reference to a missing rule, a cycle —
 * is an InvalidRequestError, so the server refuses to start with the file's mistake in the message.
 */
export class NodePolicy {
  private constructor(private readonly rules: ReadonlyMap<string, RuleExpr>) {}

  static defaults(): NodePolicy {
    return NodePolicy.withOverrides({});
  }

  /** `overrides`: rule name → check string, e.g. `{"baremetal:node:set_power_state": "is_admin or is_node_owner"}`. */
  static withOverrides(overrides: Readonly<Record<string, unknown>>, source = 'policy'): NodePolicy {
    const texts = new Map<string, string>(Object.entries(DEFAULT_RULES));
    for (const [name, check] of Object.entries(overrides)) {
      if (typeof check !== 'string') {
        throw new InvalidRequestError(`${source}: rule ${JSON.stringify(name)} must be a check string, like "is_admin or is_node_owner"`, {
          details: { rule: name },
        });
      }
      if (name.startsWith('baremetal:') && !texts.has(name)) {
        const known = Object.keys(DEFAULT_RULES).filter((n) => n.startsWith('baremetal:'));
        throw new InvalidRequestError(`${source}: unknown rule ${JSON.stringify(name)}; Leasehold checks: ${known.join(', ')}`, {
          details: { rule: name },
        });
      }
      texts.set(name, check);
    }
    const rules = new Map<string, RuleExpr>();
    for (const [name, text] of texts) {
      try {
        rules.set(name, parseRule(text, name));
      } catch (err) {
        if (err instanceof InvalidRequestError) throw new InvalidRequestError(`${source}: ${err.message}`, { details: err.details });
        throw err;
      }
    }
    checkReferences(rules, source);
    return new NodePolicy(rules);
  }

  /** Whether the subject may do what the named rule guards. */
  allows(rule: NodeRuleName, subject: PolicySubject): boolean {
    const expr = this.rules.get(rule);
    return expr !== undefined && evaluateRule(expr, subject, this.rules);
  }
}

function checkReferences(rules: ReadonlyMap<string, RuleExpr>, source: string): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: readonly string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      throw new InvalidRequestError(`${source}: rules refer to each other in a cycle: ${[...path, name].join(' → ')}`, { details: { rule: name } });
    }
    state.set(name, 'visiting');
    for (const ref of referencedRules(rules.get(name)!)) {
      if (!rules.has(ref)) {
        throw new InvalidRequestError(`${source}: rule ${JSON.stringify(name)} refers to rule:${ref}, which is not defined`, { details: { rule: name } });
      }
      visit(ref, [...path, name]);
    }
    state.set(name, 'done');
  };
  for (const name of rules.keys()) visit(name, []);
}
