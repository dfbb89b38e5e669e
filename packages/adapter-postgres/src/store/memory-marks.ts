import type { MemoryEdit, MemoryForgetting, MemoryMarkRecord, MemoryMarkStore, MemoryReview } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, isoOrNull, json, type Row } from './rows.js';

function toMark(row: Row): MemoryMarkRecord {
  return {
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    memoryId: row.memory_id as string,
    threadId: row.thread_id as string,
    observationId: row.observation_id as string,
    sourceId: (row.source_id as string | null) ?? null,
    pinned: row.pinned as boolean,
    forgotten: (row.forgotten as MemoryForgetting | null) ?? null,
    edited: (row.edited as MemoryEdit | null) ?? null,
    citedAt: isoOrNull(row.cited_at),
    citedCount: Number(row.cited_count),
    category: (row.category as string | null) ?? null,
    policyVersion: row.policy_version === null || row.policy_version === undefined ? null : Number(row.policy_version),
    review: (row.review as MemoryReview | null) ?? null,
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
        `INSERT INTO memory_marks (agent_id, memory_id, organization_id, pinned, forgotten, forgotten_due, edited, cited_at, cited_count, updated_at, thread_id, observation_id, source_id, category, policy_version,
           review, review_state, review_at, review_fingerprint)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16::jsonb, $16::jsonb->>'state', ($16::jsonb->>'proposedAt')::timestamptz, $16::jsonb->>'fingerprint')
         ON CONFLICT (agent_id, memory_id) DO UPDATE SET organization_id = excluded.organization_id, pinned = excluded.pinned,
           thread_id = excluded.thread_id, observation_id = excluded.observation_id, source_id = excluded.source_id,
           forgotten = excluded.forgotten, forgotten_due = excluded.forgotten_due, edited = excluded.edited, cited_at = excluded.cited_at,
           cited_count = excluded.cited_count, updated_at = excluded.updated_at, category = excluded.category, policy_version = excluded.policy_version,
           review = excluded.review, review_state = excluded.review_state, review_at = excluded.review_at, review_fingerprint = excluded.review_fingerprint`,
        [
          record.agentId, record.memoryId, record.organizationId, record.pinned,
          record.forgotten === null ? null : json(record.forgotten), record.forgotten?.restoreUntil ?? null,
          record.edited === null ? null : json(record.edited), record.citedAt, record.citedCount, record.updatedAt,
          record.threadId, record.observationId, record.sourceId, record.category ?? null, record.policyVersion ?? null,
          record.review ? json(record.review) : null,
        ],
      );
    },
    async cite({ organizationId, agentId, memories, at }) {
      const unique = [...new Map(memories.map((memory) => [memory.memoryId, memory])).values()];
      if (unique.length === 0) return;
      await db.query(
        `INSERT INTO memory_marks (agent_id, memory_id, organization_id, thread_id, observation_id, source_id, cited_at, cited_count, updated_at)
         SELECT $1, m.id, $2, m.thread_id, m.observation_id, m.source_id, $3, 1, $3
           FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS m(id, thread_id, observation_id, source_id)
         ON CONFLICT (agent_id, memory_id) DO UPDATE SET cited_at = excluded.cited_at, cited_count = memory_marks.cited_count + 1, updated_at = excluded.updated_at`,
        [agentId, organizationId, at, unique.map((m) => m.memoryId), unique.map((m) => m.threadId), unique.map((m) => m.observationId), unique.map((m) => m.sourceId)],
      );
    },
    async recordLearned({ organizationId, agentId, memories, at }) {
      const unique = [...new Map(memories.map((memory) => [memory.memoryId, memory])).values()];
      if (unique.length === 0) return;
      await db.query(
        `INSERT INTO memory_marks (agent_id, memory_id, organization_id, thread_id, observation_id, source_id, category, policy_version, updated_at,
           review, review_state, review_at, review_fingerprint)
         SELECT $1, m.id, $2, m.thread_id, m.observation_id, m.source_id, m.category, m.policy_version, $3,
           m.review, m.review->>'state', (m.review->>'proposedAt')::timestamptz, m.review->>'fingerprint'
           FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::jsonb[]) AS m(id, thread_id, observation_id, source_id, category, policy_version, review)
         ON CONFLICT (agent_id, memory_id) DO UPDATE SET category = excluded.category, policy_version = excluded.policy_version, updated_at = excluded.updated_at,
           review = COALESCE(excluded.review, memory_marks.review), review_state = COALESCE(excluded.review_state, memory_marks.review_state),
           review_at = COALESCE(excluded.review_at, memory_marks.review_at), review_fingerprint = COALESCE(excluded.review_fingerprint, memory_marks.review_fingerprint)`,
        [
          agentId, organizationId, at,
          unique.map((m) => m.memoryId), unique.map((m) => m.threadId), unique.map((m) => m.observationId), unique.map((m) => m.sourceId),
          unique.map((m) => m.category), unique.map((m) => m.policyVersion), unique.map((m) => (m.review ? json(m.review) : null)),
        ],
      );
    },
    async deleteBy({ agentId, threadId, observationId, sourceId }) {
      await db.query(
        `DELETE FROM memory_marks WHERE agent_id = $1 AND ($2::text IS NULL OR thread_id = $2) AND ($3::text IS NULL OR observation_id = $3) AND ($4::text IS NULL OR source_id = $4)`,
        [agentId, threadId ?? null, observationId ?? null, sourceId ?? null],
      );
    },
    async delete({ agentId, memoryIds }) {
      if (memoryIds.length === 0) return;
      await db.query('DELETE FROM memory_marks WHERE agent_id = $1 AND memory_id = ANY($2::text[])', [agentId, [...memoryIds]]);
    },
    async listReview({ agentId, state, limit, cursor }) {
      const [at, memoryId] = cursor ? splitCursor(cursor) : [null, null];
      const { rows } = await db.query(
        `SELECT * FROM memory_marks WHERE agent_id = $1 AND review_state = $2 AND ($3::timestamptz IS NULL OR (review_at, memory_id COLLATE "C") > ($3::timestamptz, $4::text COLLATE "C"))
         ORDER BY review_at, memory_id COLLATE "C" LIMIT $5`,
        [agentId, state, at, memoryId, limit + 1],
      );
      const page = rows.slice(0, limit).map(toMark);
      return { records: page, nextCursor: rows.length > limit && page.length > 0 ? `${page.at(-1)!.review!.proposedAt}|${page.at(-1)!.memoryId}` : null };
    },
    async declinedFingerprints({ agentId, fingerprints }) {
      if (fingerprints.length === 0) return [];
      const { rows } = await db.query(
        `SELECT DISTINCT review_fingerprint FROM memory_marks WHERE agent_id = $1 AND review_state = 'declined' AND review_fingerprint = ANY($2::text[])`,
        [agentId, [...new Set(fingerprints)]],
      );
      const declined = new Set(rows.map((row) => row.review_fingerprint as string));
      return [...new Set(fingerprints)].filter((fingerprint) => declined.has(fingerprint));
    },
    async listForgottenDue({ before, limit }) {
      const { rows } = await db.query('SELECT * FROM memory_marks WHERE forgotten_due <= $1 ORDER BY forgotten_due, memory_id LIMIT $2', [before, limit]);
      return rows.map(toMark);
    },
  };
}

/** A review cursor (`<proposedAt>|<memoryId>`); one not made by `listReview` starts from the beginning. */
function splitCursor(cursor: string): [string | null, string | null] {
  const bar = cursor.lastIndexOf('|');
  const at = cursor.slice(0, bar);
  return bar > 0 && !Number.isNaN(Date.parse(at)) ? [at, cursor.slice(bar + 1)] : [null, null];
}
