import { InvalidRequestError } from '../errors.js';
import type { ComparisonOp, Expr, Literal } from './ast.js';
import { SIZE_UNITS, expressionError, tokenize, type Token } from './lexer.js';

/**
 * Bounds on what a caller may make the parser (and the recursive checker and evaluator) chew on. A where= of
 * ~3,000 nested parentheses overflowed the stack and answered 500 (issue 11). Real requirements are a line
 * long and nest two or three levels; 4,096 characters and 64 levels of "(" or "not" leave room for generated ones.
 */
export const EXPRESSION_LIMITS = { maxLength: 4096, maxDepth: 64 } as const;

/**
 * Grammar (lowest precedence first):
 *   expr    := and ("or" and)*
 *   and     := unary ("and" unary)*
 *   unary   := "not" unary | primary
 *   primary := "(" expr ")" | "has" TRAIT | FACT OP VALUE
 *   OP      := ">=" | ">" | "<=" | "<" | "==" | "=" | "!="
 *   VALUE   := NUMBER [UNIT] | "string" | 'string' | true | false
 * Keywords are case-insensitive. A malformed expression throws InvalidRequestError naming the 1-based position
 * and what was expected there.
 */
export function parseExpression(source: string): Expr {
  if (source.length > EXPRESSION_LIMITS.maxLength) {
    // Not echoed back: the caret line would repeat the whole oversized text.
    throw new InvalidRequestError(
      `invalid expression at position ${EXPRESSION_LIMITS.maxLength + 1}: longer than ${EXPRESSION_LIMITS.maxLength} characters (${source.length})`,
      { details: { position: EXPRESSION_LIMITS.maxLength + 1, reason: 'too long', max_length: EXPRESSION_LIMITS.maxLength } },
    );
  }
  if (source.trim() === '') throw expressionError(source, 1, 'expected an expression, got nothing');
  const tokens = tokenize(source);
  let at = 0;
  /** How many "(" and "not" enclose the token being parsed: the recursion depth, bounded. */
  let depth = 0;
  const enter = (t: Token): void => {
    if (++depth > EXPRESSION_LIMITS.maxDepth) {
      throw expressionError(source, t.pos, `nested deeper than ${EXPRESSION_LIMITS.maxDepth} levels of "(" and "not"`);
    }
  };
  const peek = (): Token => tokens[at]!;
  const next = (): Token => tokens[at++]!;
  const isWord = (t: Token, word: string) => t.kind === 'ident' && t.text.toLowerCase() === word;
  const describe = (t: Token): string => {
    switch (t.kind) {
      case 'end':
        return 'the end of the expression';
      case 'ident':
        return `"${t.text}"`;
      case 'number':
        return `the number ${t.text}`;
      case 'string':
        return `the string "${t.value}"`;
      case 'op':
        return `"${t.text}"`;
      default:
        return t.kind === 'lparen' ? '"("' : '")"';
    }
  };
  const fail = (t: Token, expected: string): never => {
    throw expressionError(source, t.pos, `expected ${expected}, got ${describe(t)}`);
  };

  function parseOr(): Expr {
    let left = parseAnd();
    while (isWord(peek(), 'or')) {
      next();
      left = { type: 'or', left, right: parseAnd() };
    }
    return left;
  }

  function parseAnd(): Expr {
    let left = parseUnary();
    while (isWord(peek(), 'and')) {
      next();
      left = { type: 'and', left, right: parseUnary() };
    }
    return left;
  }

  function parseUnary(): Expr {
    if (isWord(peek(), 'not')) {
      enter(next());
      const expr: Expr = { type: 'not', expr: parseUnary() };
      depth--;
      return expr;
    }
    return parsePrimary();
  }

  function parsePrimary(): Expr {
    const t = next();
    if (t.kind === 'lparen') {
      enter(t);
      const inner = parseOr();
      const close = next();
      if (close.kind !== 'rparen') fail(close, '")" or "and"/"or"');
      depth--;
      return inner;
    }
    if (t.kind !== 'ident' || ['and', 'or'].includes(t.text.toLowerCase())) {
      return fail(t, 'a fact name (like memory), "has TRAIT", "not" or "("');
    }
    if (t.text.toLowerCase() === 'has') {
      const trait = next();
      if (trait.kind !== 'ident') fail(trait, 'a trait name after "has" (like CUSTOM_NVME)');
      return { type: 'has', trait: (trait as { text: string }).text, pos: trait.pos };
    }
    const op = next();
    if (op.kind !== 'op') fail(op, `a comparison after "${t.text}" (>=, >, <=, <, ==, !=)`);
    const value = parseValue();
    return { type: 'compare', fact: t.text, op: (op as { text: ComparisonOp }).text, value, pos: t.pos };
  }

  function parseValue(): Literal {
    const t = next();
    if (t.kind === 'number') {
      const unit = t.unit === null ? 1 : SIZE_UNITS[t.unit.toLowerCase()]!;
      return { kind: 'number', value: t.value * unit, sized: t.unit !== null };
    }
    if (t.kind === 'string') return { kind: 'string', value: t.value };
    if (isWord(t, 'true') || isWord(t, 'false')) {
      return { kind: 'boolean', value: (t as { text: string }).text.toLowerCase() === 'true' };
    }
    return fail(t, 'a value: a number (with a unit like GiB or TB for sizes), a "quoted string", true or false');
  }

  const expr = parseOr();
  const end = peek();
  if (end.kind !== 'end') fail(end, '"and", "or" or the end of the expression');
  return expr;
}
