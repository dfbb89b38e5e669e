import { readTurnDetails, type LearningReason, type TurnRecord, type TurnState, type TurnStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import type { Row } from './rows.js';

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

/** The turns of jobs, in `job_turns` (written with their job by `jobs.insert` and `jobs.appendTurns`). */
export function postgresTurns(db: SqlClient): TurnStore {
  return {
    async list({ jobId, fromIndex, limit }) {
      const { rows } = await db.query('SELECT * FROM job_turns WHERE job_id = $1 AND turn_index >= $2 ORDER BY turn_index LIMIT $3', [
        jobId,
        fromIndex,
        limit,
      ]);
      return rows.map(toTurn);
    },
    async get({ refs }) {
      if (refs.length === 0) return [];
      const { rows } = await db.query(
        `SELECT t.* FROM job_turns t JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::int[]) AS r(job_id, turn_index)) r
           ON t.job_id = r.job_id AND t.turn_index = r.turn_index ORDER BY t.job_id COLLATE "C", t.turn_index`,
        [refs.map((ref) => ref.jobId), refs.map((ref) => ref.turnIndex)],
      );
      return rows.map(toTurn);
    },
    async setStates({ jobId, turnIndexes, state, failureReason }) {
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
    async counts({ jobId }) {
      const { rows } = await db.query<{ state: TurnState; n: string }>('SELECT state, count(*) AS n FROM job_turns WHERE job_id = $1 GROUP BY state', [jobId]);
      const counts: Record<TurnState, number> = { pending: 0, read: 0, committed: 0, failed: 0 };
      for (const row of rows) counts[row.state] = Number(row.n);
      return counts;
    },
    async countCommitted({ agentId }) {
      const { rows } = await db.query<{ n: string }>(
        "SELECT count(*) AS n FROM job_turns t JOIN jobs j ON j.id = t.job_id WHERE j.agent_id = $1 AND t.state = 'committed'",
        [agentId],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
