import { readJobDetails, readTurnDetails, type JobRecord, type JobStore, type JobSupersession, type LearningReason, type TurnRecord, type TurnState } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { patchRow, type PatchColumn } from '../patch-row.js';
import { iso, isoOrNull, json, type Row } from './rows.js';
import { postgresJobModelUsage } from './job-model-usage.js';
import { postgresJobRepoints } from './job-repoints.js';

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

function toTurn(row: Row): TurnRecord {
  return {
    jobId: row.job_id as string,
    turnIndex: Number(row.turn_index),
    speaker: row.speaker as string,
    text: row.text as string,
    timestamp: row.sent_at as string,
    tags: row.tags as string[],
    state: row.state as TurnState,
    failureReason: (row.failure_reason as LearningReason | null) ?? null,
    details: readTurnDetails(row.details),
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

/** Jobs and their turns; an insert takes the agent's row lock (its single ingestion slot). */
export function postgresJobs(db: SqlClient): JobStore {
  return {
    ...postgresJobModelUsage(db),
    ...postgresJobRepoints(db),
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
    async listTurns({ jobId, fromIndex, limit }) {
      const { rows } = await db.query('SELECT * FROM job_turns WHERE job_id = $1 AND turn_index >= $2 ORDER BY turn_index LIMIT $3', [
        jobId,
        fromIndex,
        limit,
      ]);
      return rows.map(toTurn);
    },
    async getTurns({ refs }) {
      if (refs.length === 0) return [];
      const { rows } = await db.query(
        `SELECT t.* FROM job_turns t JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::int[]) AS r(job_id, turn_index)) r
           ON t.job_id = r.job_id AND t.turn_index = r.turn_index ORDER BY t.job_id COLLATE "C", t.turn_index`,
        [refs.map((ref) => ref.jobId), refs.map((ref) => ref.turnIndex)],
      );
      return rows.map(toTurn);
    },
    async setTurnStates({ jobId, turnIndexes, state, failureReason }) {
      // One statement (one round trip, one commit): the job's row is locked first (`locked` feeds
      // the turns' update), in the order a thread or agent delete cascades (jobs, then job_turns):
      // the other order deadlocks with a delete running at the same moment. The count reads the
      // statement's snapshot, before the turns change: the other turns not pending, plus the
      // changed ones when their new state is not pending. A job that is gone changes nothing.
      await db.query(
        `WITH locked AS (SELECT id FROM jobs WHERE id = $1 FOR UPDATE),
         changed AS (
           UPDATE job_turns t SET state = $3, failure_reason = $4 FROM locked
           WHERE t.job_id = locked.id AND t.turn_index = ANY($2::int[]) RETURNING t.turn_index)
         UPDATE jobs SET turns_processed =
           (SELECT count(*) FROM job_turns WHERE job_id = $1 AND state <> 'pending' AND NOT (turn_index = ANY($2::int[])))
           + CASE WHEN $3 = 'pending' THEN 0 ELSE (SELECT count(*) FROM changed) END
         FROM locked WHERE jobs.id = locked.id`,
        [jobId, turnIndexes, state, state === 'failed' ? (failureReason ?? null) : null],
      );
    },
    async recordSupersessions({ jobId, supersessions }) {
      const rows = supersessions.flatMap(({ turnIndex, memoryIds }) => memoryIds.map((memoryId) => ({ turnIndex, memoryId })));
      if (rows.length === 0) return;
      // A job that is gone (deleted meanwhile) records nothing: the join drops the rows.
      await db.query(
        `INSERT INTO job_supersessions (job_id, memory_id, turn_index)
         SELECT $1, m.memory_id, m.turn_index FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS m(memory_id, turn_index, n)
         WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1) ORDER BY m.n
         ON CONFLICT (job_id, memory_id) DO NOTHING`,
        [jobId, rows.map((row) => row.memoryId), rows.map((row) => row.turnIndex)],
      );
    },
    async supersessions({ jobId }) {
      const { rows } = await db.query<{ memory_id: string; turn_index: number | null }>(
        'SELECT memory_id, turn_index FROM job_supersessions WHERE job_id = $1 ORDER BY turn_index NULLS LAST, seq',
        [jobId],
      );
      const found: JobSupersession[] = [];
      for (const row of rows) {
        const turnIndex = row.turn_index === null ? null : Number(row.turn_index);
        const last = found.at(-1);
        if (last && last.turnIndex === turnIndex) last.memoryIds.push(row.memory_id);
        else found.push({ turnIndex, memoryIds: [row.memory_id] });
      }
      return found;
    },
    async recordMerges({ jobId, merges }) {
      if (merges.length === 0) return;
      // A job that is gone (deleted meanwhile) records nothing: the join drops the rows.
      await db.query(
        `INSERT INTO job_merges (job_id, turn_index, memory_id)
         SELECT $1, m.turn_index, m.memory_id FROM unnest($2::int[], $3::text[]) AS m(turn_index, memory_id)
         WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1)
         ON CONFLICT (job_id, turn_index) DO UPDATE SET memory_id = excluded.memory_id`,
        [jobId, merges.map((merge) => merge.turnIndex), merges.map((merge) => merge.memoryId)],
      );
    },
    async merges({ jobId }) {
      const { rows } = await db.query<{ turn_index: number; memory_id: string }>('SELECT turn_index, memory_id FROM job_merges WHERE job_id = $1 ORDER BY turn_index', [jobId]);
      return rows.map((row) => ({ turnIndex: Number(row.turn_index), memoryId: row.memory_id }));
    },
    async recordPolicyDrops({ jobId, drops }) {
      if (drops.length === 0) return;
      const turns = [...new Set(drops.map((drop) => drop.turnIndex))];
      // A job that is gone (deleted meanwhile) records nothing: the join drops the rows.
      await db.query('DELETE FROM job_policy_drops WHERE job_id = $1 AND turn_index = ANY($2::int[])', [jobId, turns]);
      await db.query(
        `INSERT INTO job_policy_drops (job_id, turn_index, seq, category, rule)
         SELECT $1, d.turn_index, d.seq, d.category, d.rule FROM unnest($2::int[], $3::int[], $4::text[], $5::text[]) AS d(turn_index, seq, category, rule)
         WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1)
         ON CONFLICT (job_id, turn_index, seq) DO UPDATE SET category = excluded.category, rule = excluded.rule`,
        [jobId, drops.map((drop) => drop.turnIndex), drops.map((_, i) => i), drops.map((drop) => drop.category), drops.map((drop) => drop.rule)],
      );
    },
    async policyDrops({ jobId }) {
      const { rows } = await db.query<{ turn_index: number; category: string | null; rule: string }>('SELECT turn_index, category, rule FROM job_policy_drops WHERE job_id = $1 ORDER BY turn_index, seq', [jobId]);
      return rows.map((row) => ({ turnIndex: Number(row.turn_index), category: row.category, rule: row.rule }));
    },
    async turnCounts({ jobId }) {
      const { rows } = await db.query<{ state: TurnState; n: string }>('SELECT state, count(*) AS n FROM job_turns WHERE job_id = $1 GROUP BY state', [jobId]);
      const counts: Record<TurnState, number> = { pending: 0, read: 0, committed: 0, failed: 0 };
      for (const row of rows) counts[row.state] = Number(row.n);
      return counts;
    },
    async countCommittedTurns({ agentId }) {
      const { rows } = await db.query<{ n: string }>(
        "SELECT count(*) AS n FROM job_turns t JOIN jobs j ON j.id = t.job_id WHERE j.agent_id = $1 AND t.state = 'committed'",
        [agentId],
      );
      return Number(rows[0]?.n ?? 0);
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
