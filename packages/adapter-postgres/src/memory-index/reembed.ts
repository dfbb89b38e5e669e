import { assertReembedWrite, sameFingerprint, type EmbedderFingerprint, type ReembedPendingRecord, type ReembedProgress, type ReembeddedVector } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import type { IndexTables, VectorKind } from './schema.js';
import { norm, vectorLiteral } from './vectors.js';

/**
 * Re-embedding (issue 39) on PostgreSQL and PGlite. The target generation lives in the records'
 * `reembedding` / `reembedding_norm` columns (migration 8), its fingerprint in the meta row
 * `reembed_target`; while one runs, a partial index on the ids still without a target vector
 * (`id COLLATE "C"`, the port's order) serves `reembedPending`. Every change takes the meta rows
 * it depends on FOR UPDATE (upserts and writes take them FOR SHARE), so a switch never meets a
 * write of the old generation half-way, in this process or another.
 */

const PENDING_INDEX = 'memory_index_records_reembed_pending';

/** The meta rows, read inside `tx` (locked as asked). */
async function readMeta(tx: SqlClient, tables: IndexTables, lock: '' | 'FOR SHARE' | 'FOR UPDATE'): Promise<{ current: EmbedderFingerprint | null; target: EmbedderFingerprint | null }> {
  const { rows } = await tx.query<{ key: string; value: string }>(`SELECT key, value FROM ${tables.meta} WHERE key IN ('embedder', 'reembed_target') ORDER BY key ${lock}`);
  const value = (key: string) => {
    const row = rows.find((candidate) => candidate.key === key);
    return row ? (JSON.parse(row.value) as EmbedderFingerprint) : null;
  };
  return { current: value('embedder'), target: value('reembed_target') };
}

/** Ends a re-embed: its vectors, its fingerprint and its pending index go. */
async function dropTarget(tx: SqlClient, tables: IndexTables): Promise<void> {
  await tx.query(`DELETE FROM ${tables.meta} WHERE key = 'reembed_target'`);
  await tx.exec(`DROP INDEX IF EXISTS ${tables.schema}.${PENDING_INDEX}`);
  await tx.query(`UPDATE ${tables.records} SET reembedding = NULL, reembedding_norm = NULL WHERE reembedding IS NOT NULL`);
}

export async function beginReembed(client: SqlClient, tables: IndexTables, next: EmbedderFingerprint): Promise<void> {
  await client.transaction(
    async (tx) => {
      // The embedder row is created by the first upsert: lock it when it exists; with none, the index is empty.
      const { current, target } = await readMeta(tx, tables, 'FOR UPDATE');
      if (current === null || sameFingerprint(target, next)) return;
      if (target !== null) await dropTarget(tx, tables);
      if (sameFingerprint(current, next)) return;
      await tx.query(`INSERT INTO ${tables.meta} (key, value) VALUES ('reembed_target', $1)`, [JSON.stringify({ id: next.id, dimensions: next.dimensions })]);
      await tx.exec(`CREATE INDEX IF NOT EXISTS ${PENDING_INDEX} ON ${tables.records} (id COLLATE "C") WHERE reembedding IS NULL`);
    },
    { unbounded: true },
  );
}

export async function reembedProgress(client: SqlClient, tables: IndexTables): Promise<ReembedProgress | null> {
  const { current, target } = await readMeta(client, tables, '');
  if (current === null || target === null) return null;
  const { rows } = await client.query<{ total: string | number; done: string | number }>(`SELECT count(*) AS total, count(reembedding) AS done FROM ${tables.records}`);
  return { from: current, to: target, done: Number(rows[0]?.done ?? 0), total: Number(rows[0]?.total ?? 0) };
}

export async function reembedPending(client: SqlClient, tables: IndexTables, limit: number, after: string | null): Promise<ReembedPendingRecord[]> {
  const { target } = await readMeta(client, tables, '');
  if (target === null || limit <= 0) return [];
  const { rows } = await client.query<{ id: string; agent_id: string; text: string }>(
    `SELECT id, agent_id, text FROM ${tables.records} WHERE reembedding IS NULL AND ($1::text IS NULL OR id COLLATE "C" > $1::text COLLATE "C")
     ORDER BY id COLLATE "C" LIMIT $2`,
    [after, Math.floor(limit)],
  );
  return rows.map((row) => ({ id: row.id, agentId: row.agent_id, text: row.text }));
}

export async function writeReembedded(client: SqlClient, tables: IndexTables, vectorKind: VectorKind, given: EmbedderFingerprint, vectors: readonly ReembeddedVector[]): Promise<void> {
  await client.transaction(async (tx) => {
    const { current, target } = await readMeta(tx, tables, 'FOR SHARE');
    assertReembedWrite(current, target, given, vectors);
    if (vectors.length === 0) return;
    // Last one wins when an id is named twice.
    const byId = new Map(vectors.map((entry) => [entry.id, entry.vector]));
    await tx.query(
      `UPDATE ${tables.records} r SET reembedding = ${vectorKind === 'pgvector' ? 'u.vector::vector' : "decode(u.vector, 'hex')"}, reembedding_norm = u.norm
       FROM unnest($1::text[], $2::text[], $3::float8[]) AS u(id, vector, norm) WHERE r.id = u.id`,
      [[...byId.keys()], [...byId.values()].map((vector) => vectorLiteral(vector, vectorKind)), [...byId.values()].map(norm)],
    );
  });
}

/**
 * The switch, in one transaction: the current vector columns are dropped (their HNSW index with
 * them) and the target's renamed in their place, then added again, empty; the embedder row
 * becomes the target and every agent's version moves on, so each process's cached vectors reload.
 * Resolves false (nothing changed) while a record is pending or for another target.
 */
export async function finishReembed(client: SqlClient, tables: IndexTables, vectorKind: VectorKind, given: EmbedderFingerprint): Promise<boolean> {
  return client.transaction(
    async (tx) => {
      const { target } = await readMeta(tx, tables, 'FOR UPDATE');
      if (target === null || !sameFingerprint(target, given)) return false;
      const { records, meta, agents } = tables;
      // No insert may slip in between the check and the swap.
      await tx.exec(`LOCK TABLE ${records} IN SHARE ROW EXCLUSIVE MODE`);
      const { rows } = await tx.query(`SELECT 1 FROM ${records} WHERE reembedding IS NULL LIMIT 1`);
      if (rows.length > 0) return false;
      const type = vectorKind === 'pgvector' ? 'vector' : 'bytea';
      await tx.exec(`
        DROP INDEX IF EXISTS ${tables.schema}.${PENDING_INDEX};
        ALTER TABLE ${records} DROP COLUMN embedding, DROP COLUMN embedding_norm;
        ALTER TABLE ${records} RENAME COLUMN reembedding TO embedding;
        ALTER TABLE ${records} RENAME COLUMN reembedding_norm TO embedding_norm;
        ALTER TABLE ${records} ADD COLUMN reembedding ${type}, ADD COLUMN reembedding_norm double precision;
      `);
      await tx.query(`UPDATE ${meta} SET value = $1 WHERE key = 'embedder'`, [JSON.stringify({ id: target.id, dimensions: target.dimensions })]);
      await tx.query(`DELETE FROM ${meta} WHERE key = 'reembed_target'`);
      await tx.query(`UPDATE ${agents} SET version = version + 1`);
      return true;
    },
    { unbounded: true },
  );
}

/** The embedder row read and share-locked inside an upsert's transaction: a switch waits for the upsert, or the upsert for it. */
export async function lockedFingerprint(tx: SqlClient, tables: IndexTables): Promise<EmbedderFingerprint> {
  const { rows } = await tx.query<{ value: string }>(`SELECT value FROM ${tables.meta} WHERE key = 'embedder' FOR SHARE`);
  return JSON.parse(rows[0]!.value) as EmbedderFingerprint;
}
