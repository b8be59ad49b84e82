import { InvalidRequestError } from '../errors.js';
import { Role } from '../identity.js';

/**
 * Policy check strings in the style of Ironic's (oslo.policy): `is_admin or (is_node_owner and role:member)`.
 *
 *   check   := or
 *   or      := and ("or" and)*
 *   and     := not ("and" not)*
 *   not     := "not" not | "(" or ")" | atom
 *   atom    := "@" (always) | "!" (never) | "is_admin" | "is_node_owner" | "is_node_lessee" | "is_node_sublessee"
 *            | "role:" reader|member|manager|admin | "rule:" NAME
 *
 * `is_node_lessee` is decided from Leasehold's lease table at the instant of the request (the caller's project
 * holds an active lease on the node), never from Ironic's `lessee` field. `role:X` holds for X and every role
 * above it (reader < member < manager < admin), as Ironic's role implication does. An empty string is `@`, as in
 * oslo.policy.
 */
export type RuleExpr =
  | { readonly kind: 'always' }
  | { readonly kind: 'never' }
  | { readonly kind: 'fact'; readonly fact: Fact }
  | { readonly kind: 'role'; readonly role: Role }
  | { readonly kind: 'rule'; readonly name: string }
  | { readonly kind: 'not'; readonly expr: RuleExpr }
  | { readonly kind: 'and' | 'or'; readonly exprs: readonly RuleExpr[] };

export const FACTS = ['is_admin', 'is_node_owner', 'is_node_lessee', 'is_node_sublessee'] as const;
export type Fact = (typeof FACTS)[number];

const ROLES: readonly string[] = Object.values(Role);
const TOKEN = /\s*(\(|\)|@|!|[A-Za-z_][\w.:-]*)/y;

/** Parses a check string; a malformed one is an InvalidRequestError naming the rule and the position. */
export function parseRule(text: string, ruleName: string): RuleExpr {
  const tokens: { value: string; at: number }[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < text.length) {
    if (/^\s*$/.test(text.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (!m) throw fail(ruleName, text, pos + (text.slice(pos).length - text.slice(pos).trimStart().length), 'unexpected character');
    tokens.push({ value: m[1]!, at: m.index + m[0].length - m[1]!.length });
    pos = TOKEN.lastIndex;
  }
  if (tokens.length === 0) return { kind: 'always' };
  let i = 0;
  const peek = () => tokens[i]?.value.toLowerCase();
  const orExpr = (): RuleExpr => {
    const exprs = [andExpr()];
    while (peek() === 'or') {
      i++;
      exprs.push(andExpr());
    }
    return exprs.length === 1 ? exprs[0]! : { kind: 'or', exprs };
  };
  const andExpr = (): RuleExpr => {
    const exprs = [notExpr()];
    while (peek() === 'and') {
      i++;
      exprs.push(notExpr());
    }
    return exprs.length === 1 ? exprs[0]! : { kind: 'and', exprs };
  };
  const notExpr = (): RuleExpr => {
    const token = tokens[i];
    if (!token) throw fail(ruleName, text, text.length, 'the check string ends too early');
    const lower = token.value.toLowerCase();
    if (lower === 'not') {
      i++;
      return { kind: 'not', expr: notExpr() };
    }
    if (token.value === '(') {
      i++;
      const inner = orExpr();
      if (tokens[i]?.value !== ')') throw fail(ruleName, text, tokens[i]?.at ?? text.length, 'expected ")"');
      i++;
      return inner;
    }
    i++;
    return atom(token.value, token.at);
  };
  const atom = (value: string, at: number): RuleExpr => {
    if (value === '@') return { kind: 'always' };
    if (value === '!') return { kind: 'never' };
    if ((FACTS as readonly string[]).includes(value)) return { kind: 'fact', fact: value as Fact };
    if (value.startsWith('role:')) {
      const role = value.slice('role:'.length);
      if (!ROLES.includes(role)) throw fail(ruleName, text, at, `unknown role ${JSON.stringify(role)} (known: ${ROLES.join(', ')})`);
      return { kind: 'role', role: role as Role };
    }
    if (value.startsWith('rule:') && value.length > 'rule:'.length) return { kind: 'rule', name: value.slice('rule:'.length) };
    throw fail(
      ruleName,
      text,
      at,
      `unknown check ${JSON.stringify(value)} (known: @, !, ${FACTS.join(', ')}, role:<${ROLES.join('|')}>, rule:<name>, and, or, not, parentheses)`,
    );
  };
  const expr = orExpr();
  if (i < tokens.length) throw fail(ruleName, text, tokens[i]!.at, `unexpected ${JSON.stringify(tokens[i]!.value)}`);
  return expr;
}

/** The facts a check is decided on, about one caller and (for node rules) one node, at one instant. */
export interface PolicySubject {
  readonly is_admin: boolean;
  readonly is_node_owner: boolean;
  readonly is_node_lessee: boolean;
  /**
   * The caller's lease on the node is a sub-lease (booked from another lessee's sub-offer). Only the sub-leasing rule
   * asks it; a subject that does not say is not a sub-lessee.
   */
  readonly is_node_sublessee?: boolean;
  readonly role: Role;
}

/** Evaluates a parsed check; `rule:` references are looked up in `rules` (checked for cycles when loaded). */
export function evaluateRule(expr: RuleExpr, subject: PolicySubject, rules: ReadonlyMap<string, RuleExpr>): boolean {
  switch (expr.kind) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'fact':
      return subject[expr.fact] ?? false;
    case 'role':
      return rankOf(subject.role) >= rankOf(expr.role);
    case 'rule': {
      const target = rules.get(expr.name);
      return target !== undefined && evaluateRule(target, subject, rules);
    }
    case 'not':
      return !evaluateRule(expr.expr, subject, rules);
    case 'and':
      return expr.exprs.every((e) => evaluateRule(e, subject, rules));
    case 'or':
      return expr.exprs.some((e) => evaluateRule(e, subject, rules));
  }
}

/** Names a check refers to with `rule:`. */
export function referencedRules(expr: RuleExpr): string[] {
  switch (expr.kind) {
    case 'rule':
      return [expr.name];
    case 'not':
      return referencedRules(expr.expr);
    case 'and':
    case 'or':
      return expr.exprs.flatMap(referencedRules);
    default:
      return [];
  }
}

const rankOf = (role: Role): number => ROLES.indexOf(role);

function fail(rule: string, text: string, at: number, why: string): InvalidRequestError {
  return new InvalidRequestError(`policy rule ${JSON.stringify(rule)}: ${why} at position ${at + 1} of ${JSON.stringify(text)}`, {
    details: { rule, position: at + 1, check: text },
  });
}
