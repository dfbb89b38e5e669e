import type { JobModelUsage, JobStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';

/** The `jobs` area's model usage of learning batches (issue 33, receipts), in `job_model_usage`. */
export function postgresJobModelUsage(db: SqlClient): Pick<JobStore, 'recordModelUsage' | 'modelUsage'> {
  return {
    async recordModelUsage({ jobId, batch }) {
      const turnIndexes = [...batch.turnIndexes].sort((a, b) => a - b);
      if (turnIndexes.length === 0) return;
      const { usage } = batch;
      await db.transaction(async (tx) => {
        // A batch re-run after a crash (perhaps with other bounds) replaces every batch it overlaps.
        await tx.query('DELETE FROM job_model_usage WHERE job_id = $1 AND turn_indexes && $2::int[]', [jobId, turnIndexes]);
        if (usage.length === 0) return;
        // A job that is gone (deleted meanwhile) records nothing: the EXISTS drops the rows.
        await tx.query(
          `INSERT INTO job_model_usage (job_id, first_turn, turn_indexes, position, model, input_tokens, output_tokens)
           SELECT $1, $2, $3::int[], u.n - 1, u.model, u.input_tokens, u.output_tokens
             FROM unnest($4::text[], $5::bigint[], $6::bigint[]) WITH ORDINALITY AS u(model, input_tokens, output_tokens, n)
            WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1)`,
          [jobId, turnIndexes[0], turnIndexes, usage.map((entry) => entry.model), usage.map((entry) => entry.inputTokens), usage.map((entry) => entry.outputTokens)],
        );
      });
    },
    async modelUsage({ jobId }) {
      const { rows } = await db.query<{ first_turn: number; turn_indexes: number[]; model: string; input_tokens: string; output_tokens: string }>(
        'SELECT first_turn, turn_indexes, model, input_tokens, output_tokens FROM job_model_usage WHERE job_id = $1 ORDER BY first_turn, position',
        [jobId],
      );
      const batches: (JobModelUsage & { first: number })[] = [];
      for (const row of rows) {
        const first = Number(row.first_turn);
        let batch = batches.at(-1);
        if (!batch || batch.first !== first) {
          batch = { first, turnIndexes: row.turn_indexes.map(Number), usage: [] };
          batches.push(batch);
        }
        batch.usage.push({ model: row.model, inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens) });
      }
      return batches.map(({ turnIndexes, usage }) => ({ turnIndexes, usage }));
    },
  };
}
