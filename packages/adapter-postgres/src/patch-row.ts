import type { SqlClient } from './sql-client.js';

/** How one camelCase field of a patch maps to its column. */
export type PatchColumn = { column: string; cast?: string; encode?: (value: unknown) => unknown };

/**
 * Applies a partial patch to the row of `table` whose `keyColumn` is `key` and resolves the row
 * after it (the row unchanged when the patch names no known field; null when absent). Fields not
 * in `columns`, and `undefined` values, are ignored.
 */
export async function patchRow(
  db: SqlClient,
  table: string,
  keyColumn: string,
  key: string,
  patch: Record<string, unknown>,
  columns: Record<string, PatchColumn>,
): Promise<Record<string, unknown> | null> {
  const sets: string[] = [];
  const params: unknown[] = [key];
  for (const [field, value] of Object.entries(patch)) {
    const mapping = columns[field];
    if (!mapping || value === undefined) continue;
    params.push(mapping.encode ? mapping.encode(value) : value);
    sets.push(`${mapping.column} = $${params.length}${mapping.cast ? `::${mapping.cast}` : ''}`);
  }
  const { rows } =
    sets.length === 0
      ? await db.query(`SELECT * FROM ${table} WHERE ${keyColumn} = $1`, [key])
      : await db.query(`UPDATE ${table} SET ${sets.join(', ')} WHERE ${keyColumn} = $1 RETURNING *`, params);
  return rows[0] ?? null;
}
