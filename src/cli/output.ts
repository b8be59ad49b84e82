/** Plain-text renderings: aligned tables for lists, two-column tables for one object, pretty JSON for `--json`. */

export type Cell = string | number | boolean | null | undefined;

/** How an absent value looks in a table: visible, and never mistaken for a real value. */
export const NONE = '-';

export function cell(value: Cell): string {
  if (value === null || value === undefined || value === '') return NONE;
  // One row per item: a multi-line value (a long last_error) would break the alignment of every column.
  return String(value).replace(/\s*\n\s*/g, ' ');
}

/** Columns separated by two spaces, padded to the widest cell; the last column is not padded (no trailing blanks). */
export function renderTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const text = rows.map((row) => headers.map((_, i) => cell(row[i])));
  const widths = headers.map((header, i) => Math.max(header.length, ...text.map((row) => (row[i] ?? '').length)));
  const line = (values: readonly string[]) =>
    values
      .map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...text.map(line)].map((l) => `${l}\n`).join('');
}

/** One object as FIELD / VALUE rows. Multi-line values keep their lines, indented under the value column. */
export function renderFields(fields: readonly (readonly [string, Cell])[]): string {
  const width = Math.max('FIELD'.length, ...fields.map(([name]) => name.length));
  const lines = [`${'FIELD'.padEnd(width)}  VALUE`];
  for (const [name, value] of fields) {
    const text = value === null || value === undefined || value === '' ? NONE : String(value);
    const [first = '', ...rest] = text.split('\n');
    lines.push(`${name.padEnd(width)}  ${first}`.trimEnd());
    for (const more of rest) lines.push(`${' '.repeat(width)}  ${more}`.trimEnd());
  }
  return lines.map((l) => `${l}\n`).join('');
}

/** The server's JSON, pretty: what scripts parse. */
export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
