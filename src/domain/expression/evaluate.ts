import type { FactValue } from '../inventory.js';
import type { Expr } from './ast.js';

export interface Subject {
  readonly facts: Readonly<Record<string, FactValue>>;
  readonly traits: readonly string[];
}

/** True when the node satisfies the expression. A node without the fact fails the comparison. */
export function evaluate(expr: Expr, subject: Subject): boolean {
  switch (expr.type) {
    case 'and':
      return evaluate(expr.left, subject) && evaluate(expr.right, subject);
    case 'or':
      return evaluate(expr.left, subject) || evaluate(expr.right, subject);
    case 'not':
      return !evaluate(expr.expr, subject);
    case 'has':
      return subject.traits.includes(expr.trait);
    case 'compare': {
      const actual = subject.facts[expr.fact];
      if (actual === undefined || typeof actual !== expr.value.kind) return false;
      const wanted = expr.value.value;
      switch (expr.op) {
        case '==':
          return typeof actual === 'string' && typeof wanted === 'string'
            ? actual.toLowerCase() === wanted.toLowerCase()
            : actual === wanted;
        case '!=':
          return typeof actual === 'string' && typeof wanted === 'string'
            ? actual.toLowerCase() !== wanted.toLowerCase()
            : actual !== wanted;
        case '>=':
          return (actual as number) >= (wanted as number);
        case '>':
          return (actual as number) > (wanted as number);
        case '<=':
          return (actual as number) <= (wanted as number);
        case '<':
          return (actual as number) < (wanted as number);
      }
    }
  }
}
