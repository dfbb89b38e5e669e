import type { SqlClient } from './sql-client.js';

/** How one camelCase field of a patch maps to its column. */
export type PatchColumn = { column: string; cast?: string; encode?: (value: unknown) => unknown };

/**
 * Applies a partial patch to the row of `table` whose `keyColumn` is `key` and resolves the row
 * after it (the row unchanged when the patch names no known field; null when absent). Fields not
 * in `columns`, and `undefined` values, are ignored. With `guard`, only a row whose `guard.column`
 * is one of `guard.values` is patched (or read); any other resolves null.
 */
export async function patchRow(
  db: SqlClient,
  table: string,
  keyColumn: string,
  key: string,
  patch: Record<string, unknown>,
  columns: Record<string, PatchColumn>,
  guard?: { column: string; values: readonly string[] },
): Promise<Record<string, unknown> | null> {
  const sets: string[] = [];
  const params: unknown[] = [key];
  let where = `${keyColumn} = $1`;
  if (guard) {
    params.push(guard.values);
    where += ` AND ${guard.column} = ANY($2::text[])`;
  }
  for (const [field, value] of Object.entries(patch)) {
    const mapping = columns[field];
    if (!mapping || value === undefined) continue;
    params.push(mapping.encode ? mapping.encode(value) : value);
    sets.push(`${mapping.column} = $${params.length}${mapping.cast ? `::${mapping.cast}` : ''}`);
  }
  const { rows } =
    sets.length === 0
      ? await db.query(`SELECT * FROM ${table} WHERE ${where}`, params)
      : await db.query(`UPDATE ${table} SET ${sets.join(', ')} WHERE ${where} RETURNING *`, params);
  return rows[0] ?? null;
}
