import type { ThreadRecord, ThreadStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, json, type Row } from './rows.js';

function toThread(row: Row): ThreadRecord {
  return {
    id: row.id as string,
    agentId: row.agent_id as string,
    organizationId: row.organization_id as string,
    endUserId: (row.end_user_id as string | null) ?? null,
    status: row.status as ThreadRecord['status'],
    title: row.title as string,
    metadata: row.metadata as Record<string, unknown>,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** Threads of an agent. */
export function postgresThreads(db: SqlClient): ThreadStore {
  return {
    async insert({ thread }) {
      await db.query(
        `INSERT INTO threads (id, agent_id, organization_id, end_user_id, status, title, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9)`,
        [thread.id, thread.agentId, thread.organizationId, thread.endUserId, thread.status, thread.title, json(thread.metadata), thread.createdAt, thread.updatedAt],
      );
    },
    async get({ agentId, threadId }) {
      const { rows } = await db.query('SELECT * FROM threads WHERE id = $1 AND agent_id = $2', [threadId, agentId]);
      return rows[0] ? toThread(rows[0]) : null;
    },
    async list({ agentId, endUserId }) {
      const { rows } =
        endUserId === undefined
          ? await db.query(
              "SELECT * FROM threads WHERE agent_id = $1 AND status NOT IN ('deleting', 'deleted') ORDER BY created_at DESC, id DESC",
              [agentId],
            )
          : await db.query(
              "SELECT * FROM threads WHERE agent_id = $1 AND end_user_id = $2 AND status NOT IN ('deleting', 'deleted') ORDER BY created_at DESC, id DESC",
              [agentId, endUserId],
            );
      return rows.map(toThread);
    },
    async listByStatus({ statuses }) {
      const { rows } = await db.query('SELECT * FROM threads WHERE status = ANY($1::text[]) ORDER BY created_at, id', [statuses]);
      return rows.map(toThread);
    },
    async update({ agentId, threadId, patch, updatedAt }) {
      const { rows } = await db.query(
        `UPDATE threads SET status = COALESCE($3, status), title = COALESCE($4, title), metadata = COALESCE($5::jsonb, metadata), updated_at = $6
         WHERE id = $1 AND agent_id = $2 RETURNING *`,
        [threadId, agentId, patch.status ?? null, patch.title ?? null, patch.metadata === undefined ? null : json(patch.metadata), updatedAt],
      );
      return rows[0] ? toThread(rows[0]) : null;
    },
    async delete({ agentId, threadId }) {
      await db.query('DELETE FROM threads WHERE id = $1 AND agent_id = $2', [threadId, agentId]);
    },
  };
}
