import { readJobDetails, type JobRecord, type JobStore, type TurnRecord } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { patchRow, type PatchColumn } from '../patch-row.js';
import { iso, isoOrNull, json, type Row } from './rows.js';

/** Job statuses after which a job no longer runs (core's `FINAL_JOB_STATUSES`), as an SQL list. */
const FINAL = "('committed', 'failed', 'cancelled')";

function toJob(row: Row): JobRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    threadId: row.thread_id as string,
    endUserId: (row.end_user_id as string | null) ?? null,
    requestId: row.request_id as string,
    status: row.status as JobRecord['status'],
    seq: Number(row.seq),
    turnsTotal: Number(row.turns_total),
    turnsProcessed: Number(row.turns_processed),
    error: (row.error as string | null) ?? null,
    queued: row.queued as boolean,
    resumedAt: isoOrNull(row.resumed_at),
    learning: (row.learning as JobRecord['learning']) ?? null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    // The JSON column is read into the typed details of the job's kind (rows of any earlier version).
    ...readJobDetails(row.kind, row.details),
  };
}

/** Column names of the job fields `update` may patch. */
const JOB_COLUMNS: Record<string, PatchColumn> = {
  endUserId: { column: 'end_user_id' },
  requestId: { column: 'request_id' },
  kind: { column: 'kind' },
  status: { column: 'status' },
  turnsTotal: { column: 'turns_total' },
  turnsProcessed: { column: 'turns_processed' },
  error: { column: 'error' },
  queued: { column: 'queued' },
  resumedAt: { column: 'resumed_at', cast: 'timestamptz' },
  learning: { column: 'learning', cast: 'jsonb', encode: (value) => (value === null ? null : json(value)) },
  details: { column: 'details', cast: 'jsonb', encode: json },
  createdAt: { column: 'created_at', cast: 'timestamptz' },
  updatedAt: { column: 'updated_at', cast: 'timestamptz' },
};

/** Inserts turns of job `jobId` in one statement (none: no statement). */
async function insertTurns(db: SqlClient, jobId: string, turns: readonly TurnRecord[]): Promise<void> {
  if (turns.length === 0) return;
  await db.query(
    `INSERT INTO job_turns (job_id, turn_index, speaker, text, sent_at, tags, state, failure_reason, details)
     SELECT $1, i, s, x, ts, tg::jsonb, st, NULL, d::jsonb
       FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS u(i, s, x, ts, tg, st, d)`,
    [
      jobId,
      turns.map((t) => t.turnIndex),
      turns.map((t) => t.speaker),
      turns.map((t) => t.text),
      turns.map((t) => t.timestamp),
      turns.map((t) => json(t.tags)),
      turns.map((t) => t.state),
      turns.map((t) => json(t.details)),
    ],
  );
}

/** Jobs (inserted and appended to with their turns); an insert takes the agent's row lock (its single ingestion slot). */
export function postgresJobs(db: SqlClient): JobStore {
  return {
    insert({ job, turns, onlyIfIdle }) {
      return db.transaction(async (tx) => {
        // The agent row lock is the agent's single ingestion slot: concurrent inserts serialize here.
        const { rows: locked } = await tx.query('SELECT id FROM agents WHERE id = $1 FOR UPDATE', [job.agentId]);
        if (locked.length === 0) return null;
        if (onlyIfIdle) {
          const { rows } = await tx.query(`SELECT 1 FROM jobs WHERE agent_id = $1 AND status NOT IN ${FINAL} LIMIT 1`, [job.agentId]);
          if (rows.length > 0) return null;
        }
        const { rows } = await tx.query(
          `INSERT INTO jobs (id, organization_id, agent_id, thread_id, end_user_id, request_id, kind, status, turns_total, turns_processed,
                             error, queued, resumed_at, learning, details, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15::jsonb, $16, $17) RETURNING *`,
          [
            job.id, job.organizationId, job.agentId, job.threadId, job.endUserId, job.requestId, job.kind, job.status, job.turnsTotal,
            job.turnsProcessed, job.error, job.queued, job.resumedAt, job.learning === null ? null : json(job.learning), json(job.details),
            job.createdAt, job.updatedAt,
          ],
        );
        await insertTurns(tx, job.id, turns);
        return toJob(rows[0]!);
      });
    },
    async get({ agentId, jobId }) {
      const { rows } = await db.query('SELECT * FROM jobs WHERE id = $1 AND agent_id = $2', [jobId, agentId]);
      return rows[0] ? toJob(rows[0]) : null;
    },
    async update({ jobId, patch, ifStatus }) {
      const row = await patchRow(db, 'jobs', 'id', jobId, patch, JOB_COLUMNS, ifStatus && { column: 'status', values: ifStatus });
      return row ? toJob(row) : null;
    },
    async nextForAgent({ agentId }) {
      const { rows } = await db.query(`SELECT * FROM jobs WHERE agent_id = $1 AND status NOT IN ${FINAL} ORDER BY seq LIMIT 1`, [agentId]);
      return rows[0] ? toJob(rows[0]) : null;
    },
    async listForThread({ threadId, beforeSeq, limit }) {
      const { rows } = await db.query(
        `SELECT * FROM jobs WHERE thread_id = $1 AND ($2::bigint IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3`,
        [threadId, beforeSeq ?? null, limit],
      );
      return rows.map(toJob);
    },
    async countAhead({ threadId, seq }) {
      const { rows } = await db.query<{ ahead: string }>(
        `SELECT count(*) AS ahead FROM jobs WHERE thread_id = $1 AND seq < $2 AND status NOT IN ${FINAL}`,
        [threadId, seq],
      );
      return Number(rows[0]?.ahead ?? 0);
    },
    async agentsWithUnfinishedJobs() {
      const { rows } = await db.query<{ agent_id: string }>(`SELECT DISTINCT agent_id FROM jobs WHERE status NOT IN ${FINAL}`);
      return rows.map((row) => row.agent_id);
    },
    async cancelForThread({ threadId, at }) {
      const { rows } = await db.query<{ id: string }>(
        `UPDATE jobs SET status = 'cancelled', updated_at = $2 WHERE thread_id = $1 AND status NOT IN ${FINAL} RETURNING id`,
        [threadId, at],
      );
      return rows.map((row) => row.id);
    },
    async allForThread({ threadId }) {
      const { rows } = await db.query('SELECT * FROM jobs WHERE thread_id = $1 ORDER BY seq', [threadId]);
      return rows.map(toJob);
    },
    async listUnfinished({ organizationId }) {
      const { rows } = await db.query(`SELECT * FROM jobs WHERE organization_id = $1 AND status NOT IN ${FINAL} ORDER BY seq`, [organizationId]);
      return rows.map(toJob);
    },
    appendTurns({ jobId, turns }) {
      return db.transaction(async (tx) => {
        const { rows: locked } = await tx.query('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [jobId]);
        if (locked.length === 0) return null;
        await insertTurns(tx, jobId, turns);
        const { rows } = await tx.query('UPDATE jobs SET turns_total = turns_total + $2 WHERE id = $1 RETURNING *', [jobId, turns.length]);
        return toJob(rows[0]!);
      });
    },
    async delete({ agentId, jobIds }) {
      if (jobIds.length === 0) return 0;
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string }>('DELETE FROM jobs WHERE agent_id = $1 AND id = ANY($2::text[]) RETURNING id', [agentId, [...jobIds]]);
        const removed = rows.map((row) => row.id);
        if (removed.length > 0) {
          // Turns go by ON DELETE CASCADE; learning records and upload records name the job without a key.
          await tx.query('DELETE FROM learning_records WHERE agent_id = $1 AND job_id = ANY($2::text[])', [agentId, removed]);
          await tx.query('DELETE FROM document_ingests WHERE agent_id = $1 AND job_id = ANY($2::text[])', [agentId, removed]);
        }
        return removed.length;
      });
    },
  };
}
