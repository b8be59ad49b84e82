import type { ComparisonOp, Expr, Literal } from './ast.js';
import { SIZE_UNITS, expressionError, tokenize, type Token } from './lexer.js';

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
  if (source.trim() === '') throw expressionError(source, 1, 'expected an expression, got nothing');
  const tokens = tokenize(source);
  let at = 0;
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
      next();
      return { type: 'not', expr: parseUnary() };
    }
    return parsePrimary();
  }

  function parsePrimary(): Expr {
    const t = next();
    if (t.kind === 'lparen') {
      const inner = parseOr();
      const close = next();
      if (close.kind !== 'rparen') fail(close, '")" or "and"/"or"');
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
