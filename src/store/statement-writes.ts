/** Commands that never change a row of a table (a SELECT is checked further: it may carry a writing CTE). */
const READ_COMMANDS: ReadonlySet<string> = new Set([
  'SELECT', 'SHOW', 'BEGIN', 'START', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE', 'SET', 'RESET', 'PREPARE', 'DEALLOCATE',
]);

/**
 * Words that make a SELECT a possible write: a data-modifying CTE (`with x as (update …) select …`, which
 * PostgreSQL reports as a SELECT), `select … into`, and `for update` (a lock taken to write next). Whole words
 * only: `updated_at` or `deleted_at` are column names, not writes.
 */
const WRITING_WORDS = /\b(insert|update|delete|merge|into|truncate)\b/i;

/**
 * Whether a statement that ran may have changed a row: false only when it certainly did not (a plain SELECT, or
 * a command that touches no table). An error on the safe side costs only a cache miss (store/read-cache.ts); one on
 * the other side would serve a stale read, so anything not known to be a read counts as a write.
 */
export function mayHaveWritten(sqlText: string, command: string | undefined): boolean {
  const tag = command?.toUpperCase();
  if (tag === undefined || !READ_COMMANDS.has(tag)) return true;
  return tag === 'SELECT' && WRITING_WORDS.test(sqlText);
}
