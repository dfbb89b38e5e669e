import type { ErasureRecord, ErasureStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, isoOrNull, json, type Row } from './rows.js';

/** The store tables an erasure deletes rows from (vacuumed by `reclaim`). */
const ERASED_TABLES = ['threads', 'messages', 'jobs', 'job_turns', 'learning_records', 'document_ingests', 'idempotency_keys', 'erasures', 'job_supersessions', 'job_model_usage', 'job_merges', 'job_repoints', 'job_policy_drops'];

function toErasure(row: Row): ErasureRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    endUserId: (row.end_user_id as string | null) ?? null,
    target: { kind: row.target_kind as ErasureRecord['target']['kind'], id: row.target_id as string },
    status: row.status as ErasureRecord['status'],
    counts: row.counts as ErasureRecord['counts'],
    error: (row.error as string | null) ?? null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    startedAt: isoOrNull(row.started_at),
    completedAt: isoOrNull(row.completed_at),
  };
}

/** Erasure jobs, and the plain `VACUUM` that follows one. */
export function postgresErasures(db: SqlClient): ErasureStore {
  return {
    async insert({ erasure: e }) {
      await db.query(
        `INSERT INTO erasures (id, organization_id, agent_id, end_user_id, target_kind, target_id, status, counts, error, created_at, updated_at, started_at, completed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13)`,
        [e.id, e.organizationId, e.agentId, e.endUserId, e.target.kind, e.target.id, e.status, json(e.counts), e.error, e.createdAt, e.updatedAt, e.startedAt, e.completedAt],
      );
    },
    async get({ agentId, erasureId }) {
      const { rows } = await db.query('SELECT * FROM erasures WHERE id = $1 AND agent_id = $2', [erasureId, agentId]);
      return rows[0] ? toErasure(rows[0]) : null;
    },
    async update({ erasureId, patch, updatedAt }) {
      const { rows } = await db.query(
        `UPDATE erasures SET status = COALESCE($2, status), counts = COALESCE($3::jsonb, counts),
                error = CASE WHEN $4::boolean THEN $5 ELSE error END,
                started_at = CASE WHEN $6::boolean THEN $7::timestamptz ELSE started_at END,
                completed_at = CASE WHEN $8::boolean THEN $9::timestamptz ELSE completed_at END,
                updated_at = $10
          WHERE id = $1 RETURNING *`,
        [
          erasureId,
          patch.status ?? null,
          patch.counts === undefined ? null : json(patch.counts),
          'error' in patch, patch.error ?? null,
          'startedAt' in patch, patch.startedAt ?? null,
          'completedAt' in patch, patch.completedAt ?? null,
          updatedAt,
        ],
      );
      return rows[0] ? toErasure(rows[0]) : null;
    },
    async listByStatus({ statuses }) {
      const { rows } = await db.query('SELECT * FROM erasures WHERE status = ANY($1::text[]) ORDER BY created_at, id', [[...statuses]]);
      return rows.map(toErasure);
    },
    async reclaim() {
      // The memory index's tables too, when it shares the database (any schema).
      const { rows } = await db.query<{ name: string }>(
        `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
          WHERE (tablename LIKE 'memory\\_index\\_%' AND tablename NOT LIKE '%migrations') OR (schemaname = current_schema() AND tablename = ANY($1::text[]))`,
        [ERASED_TABLES],
      );
      // A plain VACUUM takes no lock that blocks reads or writes; it cannot run in a transaction.
      for (const { name } of rows) await db.query(`VACUUM ${name}`);
    },
  };
}
