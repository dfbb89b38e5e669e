import { copy, type State } from './state.js';
import type { TurnRecord, TurnState, TurnStore } from '../../ports/store/index.js';

/** The turns of jobs in process memory. */
export function inMemoryTurns(get: () => State): TurnStore {
  return {
    async list({ jobId, fromIndex, limit }) {
      return (get().turns.get(jobId) ?? []).slice(fromIndex, fromIndex + limit).map(copy);
    },
    async get({ refs }) {
      const turns = get().turns;
      const found = new Map<string, TurnRecord>();
      for (const { jobId, turnIndex } of refs) {
        const turn = turns.get(jobId)?.[turnIndex];
        if (turn && turn.turnIndex === turnIndex) found.set(`${jobId}#${turnIndex}`, turn);
      }
      return [...found.values()]
        .sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.turnIndex - b.turnIndex))
        .map(copy);
    },
    async setStates({ jobId, turnIndexes, state: turnState, failureReason }) {
      const state = get();
      const turns = state.turns.get(jobId);
      const job = state.jobs.get(jobId);
      if (!turns || !job) return;
      for (const index of turnIndexes) {
        const turn = turns[index];
        if (!turn) continue;
        turn.state = turnState;
        turn.failureReason = turnState === 'failed' ? (failureReason ?? null) : null;
      }
      job.turnsProcessed = turns.filter((turn) => turn.state !== 'pending').length;
    },
    async counts({ jobId }) {
      const counts: Record<TurnState, number> = { pending: 0, read: 0, committed: 0, failed: 0 };
      for (const turn of get().turns.get(jobId) ?? []) counts[turn.state]++;
      return counts;
    },
    async countCommitted({ agentId }) {
      const state = get();
      let count = 0;
      for (const job of state.jobs.values()) {
        if (job.agentId !== agentId) continue;
        for (const turn of state.turns.get(job.id) ?? []) if (turn.state === 'committed') count++;
      }
      return count;
    },
  };
}
