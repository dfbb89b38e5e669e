import type { MaintenanceRunRecord, MaintenanceRunStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, isoOrNull, json, type Row } from './rows.js';

function toRun(row: Row): MaintenanceRunRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    kind: row.kind as MaintenanceRunRecord['kind'],
    status: row.status as MaintenanceRunRecord['status'],
    maxShare: Number(row.max_share),
    currentMemories: Number(row.current_memories),
    changes: row.changes as MaintenanceRunRecord['changes'],
    done: Number(row.done),
    createdBy: row.created_by as string,
    error: (row.error as string | null) ?? null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    appliedAt: isoOrNull(row.applied_at),
    undoUntil: isoOrNull(row.undo_until),
    undoneAt: isoOrNull(row.undone_at),
  };
}

/** Maintenance runs (issue 43). */
export function postgresMaintenanceRuns(db: SqlClient): MaintenanceRunStore {
  return {
    async insert({ run: r }) {
      await db.query(
        `INSERT INTO maintenance_runs (id, organization_id, agent_id, kind, status, max_share, current_memories, changes, done, created_by, error, created_at, updated_at, applied_at, undo_until, undone_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16)`,
        [r.id, r.organizationId, r.agentId, r.kind, r.status, r.maxShare, r.currentMemories, json(r.changes), r.done, r.createdBy, r.error, r.createdAt, r.updatedAt, r.appliedAt, r.undoUntil, r.undoneAt],
      );
    },
    async get({ agentId, runId }) {
      const { rows } = await db.query('SELECT * FROM maintenance_runs WHERE id = $1 AND agent_id = $2', [runId, agentId]);
      return rows[0] ? toRun(rows[0]) : null;
    },
    async update({ runId, patch, updatedAt, ifStatus }) {
      const { rows } = await db.query(
        `UPDATE maintenance_runs SET status = COALESCE($2, status), done = COALESCE($3, done),
                error = CASE WHEN $4::boolean THEN $5 ELSE error END,
                applied_at = CASE WHEN $6::boolean THEN $7::timestamptz ELSE applied_at END,
                undo_until = CASE WHEN $8::boolean THEN $9::timestamptz ELSE undo_until END,
                undone_at = CASE WHEN $10::boolean THEN $11::timestamptz ELSE undone_at END,
                updated_at = $12
          WHERE id = $1 AND ($13::text[] IS NULL OR status = ANY($13::text[])) RETURNING *`,
        [
          runId,
          patch.status ?? null,
          patch.done ?? null,
          'error' in patch, patch.error ?? null,
          'appliedAt' in patch, patch.appliedAt ?? null,
          'undoUntil' in patch, patch.undoUntil ?? null,
          'undoneAt' in patch, patch.undoneAt ?? null,
          updatedAt,
          ifStatus === undefined ? null : [...ifStatus],
        ],
      );
      return rows[0] ? toRun(rows[0]) : null;
    },
    async list({ agentId, limit, before }) {
      const { rows } = before
        ? await db.query(
            `SELECT r.* FROM maintenance_runs r, maintenance_runs b
              WHERE b.id = $2 AND b.agent_id = $1 AND r.agent_id = $1 AND (r.created_at, r.id) < (b.created_at, b.id)
              ORDER BY r.created_at DESC, r.id DESC LIMIT $3`,
            [agentId, before, limit],
          )
        : await db.query('SELECT * FROM maintenance_runs WHERE agent_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [agentId, limit]);
      return rows.map(toRun);
    },
    async listByStatus({ statuses }) {
      const { rows } = await db.query('SELECT * FROM maintenance_runs WHERE status = ANY($1::text[]) ORDER BY created_at, id', [[...statuses]]);
      return rows.map(toRun);
    },
  };
}
