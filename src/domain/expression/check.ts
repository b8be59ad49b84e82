import { InvalidRequestError } from '../errors.js';
import type { FactValue } from '../inventory.js';
import type { Expr } from './ast.js';
import { expressionError } from './lexer.js';
import { closestName } from '../closest-name.js';

/** Facts measured in bytes: comparing them with a bare number is almost always a mistake (48 bytes of RAM?). */
export const SIZE_FACTS: ReadonlySet<string> = new Set(['memory', 'disk']);

export type FactType = 'number' | 'string' | 'boolean';

/** The facts the inventory knows, with their types, from the facts of every node. */
export function knownFacts(allFacts: Iterable<Readonly<Record<string, FactValue>>>): Map<string, FactType> {
  const known = new Map<string, FactType>([
    ['memory', 'number'],
    ['disk', 'number'],
    ['cpus', 'number'],
    ['gpus', 'number'],
    ['cpu_arch', 'string'],
    ['resource_class', 'string'],
  ]);
  for (const facts of allFacts) {
    for (const [name, value] of Object.entries(facts)) {
      if (!known.has(name)) known.set(name, typeof value as FactType);
    }
  }
  return known;
}

/**
 * Checks an expression against the known facts: an unknown fact is a 400 listing the known ones; a size fact
 * compared without a unit, a string compared with < or >, or a value of the wrong type is a 400 at its position.
 */
export function checkExpression(source: string, expr: Expr, known: ReadonlyMap<string, FactType>): void {
  switch (expr.type) {
    case 'and':
    case 'or':
      checkExpression(source, expr.left, known);
      checkExpression(source, expr.right, known);
      return;
    case 'not':
      checkExpression(source, expr.expr, known);
      return;
    case 'has':
      return;
    case 'compare': {
      const type = known.get(expr.fact);
      if (type === undefined) {
        const names = [...known.keys()].sort();
        const suggestion = closestName(expr.fact, names);
        throw new InvalidRequestError(
          `unknown fact "${expr.fact}" at position ${expr.pos}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}; known facts: ${names.join(', ')} (test traits with "has TRAIT")`,
          { details: { expression: source, position: expr.pos, fact: expr.fact, known_facts: names, ...(suggestion ? { did_you_mean: suggestion } : {}) } },
        );
      }
      const value = expr.value;
      if (value.kind !== type) {
        throw expressionError(source, expr.pos, `"${expr.fact}" is a ${type}, compared with a ${value.kind}`);
      }
      if (SIZE_FACTS.has(expr.fact) && value.kind === 'number' && !value.sized && value.value !== 0) {
        throw expressionError(source, expr.pos, `"${expr.fact}" is a size: give a unit, e.g. ${expr.fact} >= 48GiB`);
      }
      if (value.kind !== 'number' && expr.op !== '==' && expr.op !== '!=') {
        throw expressionError(source, expr.pos, `a ${value.kind} can only be compared with == or !=`);
      }
      return;
    }
  }
}
