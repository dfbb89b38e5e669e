import type { LearningReason, NotLearnedRecord, NotLearnedStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, json, type Row } from './rows.js';

function toLearning(row: Row): NotLearnedRecord {
  return {
    id: Number(row.id),
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    threadId: row.thread_id as string,
    jobId: row.job_id as string,
    requestId: row.request_id as string,
    ranges: row.ranges as NotLearnedRecord['ranges'],
    reason: row.reason as LearningReason,
    message: row.message as string,
    refundedCredits: row.refunded_credits === null || row.refunded_credits === undefined ? null : String(row.refunded_credits),
    reported: row.reported as boolean,
    createdAt: iso(row.created_at),
  };
}

/** Learning records of failed turns, reported once each. */
export function postgresNotLearned(db: SqlClient): NotLearnedStore {
  return {
    async insert({ record }) {
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO learning_records (organization_id, agent_id, thread_id, job_id, request_id, ranges, reason, message, refunded_credits, created_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9::numeric, $10) RETURNING id`,
        [
          record.organizationId, record.agentId, record.threadId, record.jobId, record.requestId, json(record.ranges), record.reason,
          record.message, record.refundedCredits, record.createdAt,
        ],
      );
      return Number(rows[0]!.id);
    },
    async list({ threadId, limit, beforeId }) {
      const { rows } =
        beforeId === undefined
          ? await db.query('SELECT * FROM learning_records WHERE thread_id = $1 ORDER BY id DESC LIMIT $2', [threadId, limit])
          : await db.query('SELECT * FROM learning_records WHERE thread_id = $1 AND id < $3 ORDER BY id DESC LIMIT $2', [threadId, limit, beforeId]);
      return rows.map(toLearning);
    },
    async takeUnreported({ threadId }) {
      // One statement: concurrent callers each get disjoint records.
      const { rows } = await db.query(
        `UPDATE learning_records SET reported = true
          WHERE id IN (SELECT id FROM learning_records WHERE thread_id = $1 AND NOT reported FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [threadId],
      );
      return rows.map(toLearning).sort((a, b) => a.id - b.id);
    },
  };
}
