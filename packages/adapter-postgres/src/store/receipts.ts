import type { JobModelUsage, JobSupersession, ReceiptStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';

/**
 * What jobs' learning did, for their receipts (issue 33): `job_supersessions`, `job_merges`,
 * `job_policy_drops` and `job_model_usage`. A job that is gone records nothing.
 */
export function postgresReceipts(db: SqlClient): ReceiptStore {
  return {
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
