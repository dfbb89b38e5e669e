import type { JobRepoint, MemorySourceRef, RepointStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, isoOrNull, json, type Row } from './rows.js';

function toRepoint(row: Row): JobRepoint {
  return {
    memoryId: row.memory_id as string,
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    createdAt: iso(row.created_at),
    writer: row.writer as string,
    validTo: isoOrNull(row.valid_to),
    supersededBy: (row.superseded_by as string | null) ?? null,
    suspicious: row.suspicious === true,
    remaining: row.remaining as MemorySourceRef[],
  };
}

/** The re-pointing intents of an erasure (issue 33), in `job_repoints`. */
export function postgresRepoints(db: SqlClient): RepointStore {
  return {
    async record({ jobId, repoint: r }) {
      // A job that is gone (deleted meanwhile) records nothing: the EXISTS drops the row.
      await db.query(
        `INSERT INTO job_repoints (job_id, memory_id, organization_id, agent_id, created_at, writer, valid_to, superseded_by, suspicious, remaining)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1)
         ON CONFLICT (job_id, memory_id) DO UPDATE SET organization_id = excluded.organization_id, agent_id = excluded.agent_id,
           created_at = excluded.created_at, writer = excluded.writer, valid_to = excluded.valid_to, superseded_by = excluded.superseded_by,
           suspicious = excluded.suspicious, remaining = excluded.remaining`,
        [jobId, r.memoryId, r.organizationId, r.agentId, r.createdAt, r.writer, r.validTo, r.supersededBy, r.suspicious, json(r.remaining)],
      );
    },
    async list({ jobId }) {
      const { rows } = await db.query('SELECT * FROM job_repoints WHERE job_id = $1 ORDER BY memory_id COLLATE "C"', [jobId]);
      return rows.map(toRepoint);
    },
    async clear({ jobId, memoryId }) {
      await db.query('DELETE FROM job_repoints WHERE job_id = $1 AND memory_id = $2', [jobId, memoryId]);
    },
  };
}
