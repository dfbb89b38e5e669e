import { ServiceError } from '@memory-agents/core';
import type { EmbedderFingerprint } from '@memory-agents/core/adapter';
import { migrate } from '../migrate.js';
import type { SqlClient } from '../sql-client.js';
import { migrations, type IndexState, type IndexTables } from './schema.js';

/**
 * Opens the index's tables: pgvector where the connection can use it (else `bytea` vectors, exact
 * search), the migrations, and what the tables record (vector kind, embedder fingerprint, whether
 * the HNSW index exists). Refuses (503) tables made with pgvector on a connection that cannot see it.
 */
export async function openTables(client: SqlClient, tables: IndexTables): Promise<Pick<IndexState, 'vectorKind' | 'fingerprint' | 'hasAnnIndex'>> {
  let wantsVector = false;
  if (client.hasVector) {
    // The extension lives in one schema of the database; a connection whose search_path leaves
    // that schema out cannot name its type or operators: exact search then, not a failed start.
    const visible = async () => (await client.query<{ visible: boolean }>("SELECT to_regtype('vector') IS NOT NULL AS visible")).rows[0]?.visible === true;
    try {
      await client.exec('CREATE EXTENSION IF NOT EXISTS vector');
      wantsVector = await visible();
    } catch {
      // Available but not installable by this role: fall back to bytea (exact, slower). Or
      // another process created it at the same moment (processes started together on a new
      // database: the loser's IF NOT EXISTS fails with a unique violation): then it is there.
      wantsVector = await visible().catch(() => false);
    }
  }
  await migrate(client, `${tables.schema}.memory_index_migrations`, migrations(tables, wantsVector ? 'pgvector' : 'bytea'), { schema: tables.schema });
  const { rows } = await client.query<{ key: string; value: string }>(`SELECT key, value FROM ${tables.meta}`);
  const values = new Map(rows.map((row) => [row.key, row.value]));
  const vectorKind = values.get('vector_kind') === 'pgvector' ? 'pgvector' : 'bytea';
  if (vectorKind === 'pgvector' && !wantsVector) {
    // Tables made with pgvector by a connection that saw it, opened by one that does not: every
    // write and search would fail. Refuse to start, saying what to change.
    throw new ServiceError(
      'service_unavailable',
      `The memory index in schema ${tables.schema} stores pgvector vectors, but this connection cannot use the type "vector": ` +
        "put the extension's schema (usually public) on the connection's search_path, e.g. ?options=-c%20search_path%3Dmyschema,public in the database URL.",
    );
  }
  const recorded = values.get('embedder');
  return { vectorKind, fingerprint: recorded ? (JSON.parse(recorded) as EmbedderFingerprint) : null, hasAnnIndex: (await annIndexState(client, tables)) === 'valid' };
}

/**
 * Whether the HNSW index exists and the planner may use it (`indisvalid`: a concurrent build that
 * failed leaves an invalid one behind). Looked up by its qualified name (`to_regclass`): the
 * schema in `tables` is a quoted identifier, which `pg_indexes.schemaname` never equals (issue
 * 41: a restarted process compared '"public"' with 'public', never saw the index, and searched
 * every agent exactly, 5x slower at 100k memories).
 */
export async function annIndexState(client: SqlClient, tables: IndexTables): Promise<'valid' | 'invalid' | 'missing'> {
  const { rows } = await client.query<{ valid: boolean | null }>(`SELECT (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)) AS valid`, [
    `${tables.schema}.memory_index_records_embedding_hnsw`,
  ]);
  const valid = rows[0]?.valid;
  return valid === true ? 'valid' : valid === false ? 'invalid' : 'missing';
}
