import { InvalidRequestError } from '../errors.js';
import type { FactValue } from '../inventory.js';
import type { Expr } from './ast.js';
import { checkExpression, knownFacts, type FactType } from './check.js';
import { parseExpression } from './parser.js';

/** Where a requirement expression came from in the request: the field errors name (`where`, `groups.0.where`). */
export interface ExpressionField {
  readonly name: string;
  /** Put before the message (`groups[0].where: ...`); none for a field whose name the message needs not repeat. */
  readonly label?: string;
}

/**
 * Parses a requirement expression and checks it against the facts of `nodes` (those the caller may know of): one
 * grammar and one error for every place that takes one — node, offer and availability filters, lease groups. A
 * bad expression is a 400 naming the position, with `details.field`.
 */
export function compileRequirement(
  source: string,
  nodeFacts: Iterable<Readonly<Record<string, FactValue>>>,
  field: ExpressionField,
): Expr {
  return compileAgainst(source, knownFacts(nodeFacts), field);
}

/** compileRequirement against facts already gathered (`knownFacts` of the nodes the caller may know of). */
export function compileAgainst(source: string, known: ReadonlyMap<string, FactType>, field: ExpressionField): Expr {
  try {
    const expr = parseExpression(source);
    checkExpression(source, expr, known);
    return expr;
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    const message = field.label ? `${field.label}: ${err.message}` : err.message;
    throw new InvalidRequestError(message, { details: { ...err.details, field: field.name } });
  }
}
