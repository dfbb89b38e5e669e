import type { MemoryEdit, MemoryForgetting, MemoryMarkRecord, MemoryMarkStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, isoOrNull, json, type Row } from './rows.js';

function toMark(row: Row): MemoryMarkRecord {
  return {
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    memoryId: row.memory_id as string,
    pinned: row.pinned as boolean,
    forgotten: (row.forgotten as MemoryForgetting | null) ?? null,
    edited: (row.edited as MemoryEdit | null) ?? null,
    citedAt: isoOrNull(row.cited_at),
    citedCount: Number(row.cited_count),
    updatedAt: iso(row.updated_at),
  };
}

/** Memory marks (issue 42), one row per marked memory of an agent. */
export function postgresMemoryMarks(db: SqlClient): MemoryMarkStore {
  return {
    async get({ agentId, memoryIds }) {
      if (memoryIds.length === 0) return [];
      const { rows } = await db.query('SELECT * FROM memory_marks WHERE agent_id = $1 AND memory_id = ANY($2::text[])', [agentId, [...memoryIds]]);
      const byId = new Map(rows.map((row) => [row.memory_id as string, toMark(row)]));
      return memoryIds.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
    },
    async put({ record }) {
      await db.query(
        `INSERT INTO memory_marks (agent_id, memory_id, organization_id, pinned, forgotten, forgotten_due, edited, cited_at, cited_count, updated_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8, $9, $10)
         ON CONFLICT (agent_id, memory_id) DO UPDATE SET organization_id = excluded.organization_id, pinned = excluded.pinned,
           forgotten = excluded.forgotten, forgotten_due = excluded.forgotten_due, edited = excluded.edited, cited_at = excluded.cited_at,
           cited_count = excluded.cited_count, updated_at = excluded.updated_at`,
        [
          record.agentId, record.memoryId, record.organizationId, record.pinned,
          record.forgotten === null ? null : json(record.forgotten), record.forgotten?.restoreUntil ?? null,
          record.edited === null ? null : json(record.edited), record.citedAt, record.citedCount, record.updatedAt,
        ],
      );
    },
    async cite({ organizationId, agentId, memoryIds, at }) {
      const ids = [...new Set(memoryIds)];
      if (ids.length === 0) return;
      await db.query(
        `INSERT INTO memory_marks (agent_id, memory_id, organization_id, cited_at, cited_count, updated_at)
         SELECT $1, id, $2, $3, 1, $3 FROM unnest($4::text[]) AS id
         ON CONFLICT (agent_id, memory_id) DO UPDATE SET cited_at = excluded.cited_at, cited_count = memory_marks.cited_count + 1, updated_at = excluded.updated_at`,
        [agentId, organizationId, at, ids],
      );
    },
    async delete({ agentId, memoryIds }) {
      if (memoryIds.length === 0) return;
      await db.query('DELETE FROM memory_marks WHERE agent_id = $1 AND memory_id = ANY($2::text[])', [agentId, [...memoryIds]]);
    },
    async listForgottenDue({ before, limit }) {
      const { rows } = await db.query('SELECT * FROM memory_marks WHERE forgotten_due <= $1 ORDER BY forgotten_due, memory_id LIMIT $2', [before, limit]);
      return rows.map(toMark);
    },
  };
}
