import { describe, expect, it } from 'vitest';
import { mayHaveWritten } from '../../src/store/statement-writes.js';

describe('mayHaveWritten', () => {
  it('a plain SELECT and commands that touch no table are reads, whatever columns they name', () => {
    expect(mayHaveWritten('select "updated_at", deleted_at, insert_id from nodes', 'SELECT')).toBe(false);
    expect(mayHaveWritten("execute lh_0123(E'tok', E'n1')", 'SELECT')).toBe(false);
    for (const tag of ['BEGIN', 'COMMIT', 'ROLLBACK', 'SET', 'PREPARE', 'show']) expect(mayHaveWritten('x', tag)).toBe(false);
  });

  it('a SELECT that carries a writing CTE, INTO or a row lock counts as a write, as does any other command', () => {
    expect(mayHaveWritten('with x as (update t set a = 1 returning a) select * from x', 'SELECT')).toBe(true);
    expect(mayHaveWritten('WITH x AS (DELETE FROM t RETURNING a) SELECT * FROM x', 'SELECT')).toBe(true);
    expect(mayHaveWritten('select * into copy from t', 'SELECT')).toBe(true);
    expect(mayHaveWritten('select * from t for update skip locked', 'SELECT')).toBe(true);
    for (const tag of ['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'CREATE TABLE', 'TRUNCATE', 'EXPLAIN', 'DO']) expect(mayHaveWritten('x', tag)).toBe(true);
    expect(mayHaveWritten('select 1', undefined)).toBe(true);
  });
});
