import { InvalidRequestError } from '../errors.js';

export type Token =
  | { readonly kind: 'ident'; readonly text: string; readonly pos: number }
  | { readonly kind: 'number'; readonly value: number; readonly unit: string | null; readonly text: string; readonly pos: number }
  | { readonly kind: 'string'; readonly value: string; readonly pos: number }
  | { readonly kind: 'op'; readonly text: string; readonly pos: number }
  | { readonly kind: 'lparen' | 'rparen' | 'end'; readonly pos: number };

/** Size units: decimal (SI, as disks are sold) and binary (as memory is). Case-insensitive. */
export const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  pb: 1e15,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
  pib: 2 ** 50,
};

/** Positions are 1-based columns, as people count them. */
export function expressionError(source: string, pos: number, message: string): InvalidRequestError {
  const caret = `${source}\n${' '.repeat(Math.max(0, pos - 1))}^`;
  return new InvalidRequestError(`invalid expression at position ${pos}: ${message}\n${caret}`, {
    details: { expression: source, position: pos, reason: message },
  });
}

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    const pos = i + 1;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '(' || ch === ')') {
      tokens.push({ kind: ch === '(' ? 'lparen' : 'rparen', pos });
      i++;
    } else if ('<>=!'.includes(ch)) {
      const two = source.slice(i, i + 2);
      if (['>=', '<=', '==', '!='].includes(two)) {
        tokens.push({ kind: 'op', text: two, pos });
        i += 2;
      } else if (ch === '<' || ch === '>' || ch === '=') {
        tokens.push({ kind: 'op', text: ch === '=' ? '==' : ch, pos });
        i++;
      } else {
        throw expressionError(source, pos, 'expected "!=" (use "not" to negate)');
      }
    } else if (ch === '"' || ch === "'") {
      const end = source.indexOf(ch, i + 1);
      if (end < 0) throw expressionError(source, pos, `unterminated string: missing closing ${ch}`);
      tokens.push({ kind: 'string', value: source.slice(i + 1, end), pos });
      i = end + 1;
    } else if (/[0-9.]/.test(ch)) {
      const m = /^(\d+(?:\.\d+)?|\.\d+)([A-Za-z]+)?/.exec(source.slice(i));
      if (!m) throw expressionError(source, pos, 'expected a number');
      // `48 GiB` as people write it: a known size unit after spaces belongs to the number (anything else, such as
      // `4 and`, is the next token).
      const spaced = m[2] === undefined ? /^\s+([A-Za-z]+)\b/.exec(source.slice(i + m[0].length)) : null;
      if (spaced && SIZE_UNITS[spaced[1]!.toLowerCase()] !== undefined) {
        tokens.push({ kind: 'number', value: Number(m[1]), unit: spaced[1]!, text: m[0] + spaced[0], pos });
        i += m[0].length + spaced[0].length;
        continue;
      }
      const unit = m[2] ?? null;
      if (unit !== null && SIZE_UNITS[unit.toLowerCase()] === undefined) {
        throw expressionError(
          source,
          pos + m[1]!.length,
          `unknown unit "${unit}"; use one of B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB`,
        );
      }
      tokens.push({ kind: 'number', value: Number(m[1]), unit, text: m[0], pos });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_.:-]*/.exec(source.slice(i))!;
      tokens.push({ kind: 'ident', text: m[0], pos });
      i += m[0].length;
    } else {
      throw expressionError(source, pos, `unexpected character ${JSON.stringify(ch)}`);
    }
  }
  tokens.push({ kind: 'end', pos: source.length + 1 });
  return tokens;
}
