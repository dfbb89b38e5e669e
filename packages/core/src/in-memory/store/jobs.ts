import { copy, deleteIngests, deleteJobs, type State } from './state.js';
import { FINAL_JOB_STATUSES, type JobRecord, type JobRepoint, type JobStore, type TurnRecord, type TurnState } from '../../ports/store/index.js';

const isUnfinished = (job: JobRecord) => !FINAL_JOB_STATUSES.includes(job.status);

/** Jobs and their turns in process memory. */
export function inMemoryJobs(get: () => State): JobStore {
  return {
    async insert({ job, turns, onlyIfIdle }) {
      const state = get();
      if (onlyIfIdle && [...state.jobs.values()].some((other) => other.agentId === job.agentId && isUnfinished(other))) return null;
      const stored: JobRecord = { ...copy(job), seq: ++state.sequence };
      state.jobs.set(stored.id, stored);
      state.turns.set(stored.id, copy(turns));
      return copy(stored);
    },
    async get({ agentId, jobId }) {
      const job = get().jobs.get(jobId);
      return job && job.agentId === agentId ? copy(job) : null;
    },
    async update({ jobId, patch, ifStatus }) {
      const job = get().jobs.get(jobId);
      if (!job || (ifStatus && !ifStatus.includes(job.status))) return null;
      Object.assign(job, copy(patch));
      return copy(job);
    },
    async nextForAgent({ agentId }) {
      let next: JobRecord | null = null;
      for (const job of get().jobs.values()) {
        if (job.agentId === agentId && isUnfinished(job) && (!next || job.seq < next.seq)) next = job;
      }
      return next ? copy(next) : null;
    },
    async countAhead({ threadId, seq }) {
      return [...get().jobs.values()].filter((job) => job.threadId === threadId && job.seq < seq && isUnfinished(job)).length;
    },
    async listForThread({ threadId, beforeSeq, limit }) {
      return [...get().jobs.values()]
        .filter((job) => job.threadId === threadId && (beforeSeq === undefined || job.seq < beforeSeq))
        .sort((a, b) => b.seq - a.seq)
        .slice(0, limit)
        .map(copy);
    },
    async agentsWithUnfinishedJobs() {
      return [...new Set([...get().jobs.values()].filter(isUnfinished).map((job) => job.agentId))];
    },
    async listTurns({ jobId, fromIndex, limit }) {
      return (get().turns.get(jobId) ?? []).slice(fromIndex, fromIndex + limit).map(copy);
    },
    async getTurns({ refs }) {
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
    async setTurnStates({ jobId, turnIndexes, state: turnState, failureReason }) {
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
    async recordSupersessions({ jobId, supersessions }) {
      const state = get();
      if (!state.jobs.has(jobId)) return;
      const recorded = state.supersessions.get(jobId) ?? [];
      const seen = new Set(recorded.flatMap((entry) => entry.memoryIds));
      for (const { turnIndex, memoryIds } of supersessions) {
        const fresh = memoryIds.filter((id) => !seen.has(id));
        if (fresh.length === 0) continue;
        fresh.forEach((id) => seen.add(id));
        const entry = recorded.find((other) => other.turnIndex === turnIndex);
        if (entry) entry.memoryIds.push(...fresh);
        else recorded.push({ turnIndex, memoryIds: [...fresh] });
      }
      state.supersessions.set(jobId, recorded);
    },
    async supersessions({ jobId }) {
      const recorded = get().supersessions.get(jobId) ?? [];
      return copy(recorded).sort((a, b) => (a.turnIndex ?? Infinity) - (b.turnIndex ?? Infinity));
    },
    async recordModelUsage({ jobId, batch }) {
      const state = get();
      if (!state.jobs.has(jobId)) return;
      const turns = new Set(batch.turnIndexes);
      const kept = (state.modelUsage.get(jobId) ?? []).filter((other) => !other.turnIndexes.some((turnIndex) => turns.has(turnIndex)));
      const recorded = batch.usage.length === 0 ? [] : [{ turnIndexes: [...batch.turnIndexes].sort((a, b) => a - b), usage: copy(batch.usage) }];
      state.modelUsage.set(jobId, [...kept, ...recorded].sort((a, b) => (a.turnIndexes[0] ?? 0) - (b.turnIndexes[0] ?? 0)));
    },
    async modelUsage({ jobId }) {
      return copy(get().modelUsage.get(jobId) ?? []);
    },
    async recordMerges({ jobId, merges }) {
      const state = get();
      if (!state.jobs.has(jobId)) return;
      const recorded = state.merges.get(jobId) ?? new Map<number, string>();
      for (const { turnIndex, memoryId } of merges) recorded.set(turnIndex, memoryId);
      state.merges.set(jobId, recorded);
    },
    async merges({ jobId }) {
      const recorded = get().merges.get(jobId) ?? new Map<number, string>();
      return [...recorded].map(([turnIndex, memoryId]) => ({ turnIndex, memoryId })).sort((a, b) => a.turnIndex - b.turnIndex);
    },
    async recordPolicyDrops({ jobId, drops }) {
      const state = get();
      if (!state.jobs.has(jobId) || drops.length === 0) return;
      const turns = new Set(drops.map((drop) => drop.turnIndex));
      const kept = (state.policyDrops.get(jobId) ?? []).filter((drop) => !turns.has(drop.turnIndex));
      state.policyDrops.set(jobId, [...kept, ...copy(drops)]);
    },
    async policyDrops({ jobId }) {
      return copy(get().policyDrops.get(jobId) ?? []).sort((a, b) => a.turnIndex - b.turnIndex);
    },
    async recordRepoint({ jobId, repoint }) {
      const state = get();
      if (!state.jobs.has(jobId)) return;
      const recorded = state.repoints.get(jobId) ?? new Map<string, JobRepoint>();
      recorded.set(repoint.memoryId, copy(repoint));
      state.repoints.set(jobId, recorded);
    },
    async repoints({ jobId }) {
      const recorded = get().repoints.get(jobId) ?? new Map<string, JobRepoint>();
      return [...recorded.values()].sort((a, b) => (a.memoryId < b.memoryId ? -1 : a.memoryId > b.memoryId ? 1 : 0)).map(copy);
    },
    async clearRepoint({ jobId, memoryId }) {
      get().repoints.get(jobId)?.delete(memoryId);
    },
    async turnCounts({ jobId }) {
      const counts: Record<TurnState, number> = { pending: 0, read: 0, committed: 0, failed: 0 };
      for (const turn of get().turns.get(jobId) ?? []) counts[turn.state]++;
      return counts;
    },
    async countCommittedTurns({ agentId }) {
      const state = get();
      let count = 0;
      for (const job of state.jobs.values()) {
        if (job.agentId !== agentId) continue;
        for (const turn of state.turns.get(job.id) ?? []) if (turn.state === 'committed') count++;
      }
      return count;
    },
    async cancelForThread({ threadId, at }) {
      const cancelled: string[] = [];
      for (const job of get().jobs.values()) {
        if (job.threadId !== threadId || !isUnfinished(job)) continue;
        job.status = 'cancelled';
        job.updatedAt = at;
        cancelled.push(job.id);
      }
      return cancelled;
    },
    async allForThread({ threadId }) {
      return [...get().jobs.values()]
        .filter((job) => job.threadId === threadId)
        .sort((a, b) => a.seq - b.seq)
        .map(copy);
    },
    async listUnfinished({ organizationId }) {
      return [...get().jobs.values()]
        .filter((job) => job.organizationId === organizationId && isUnfinished(job))
        .sort((a, b) => a.seq - b.seq)
        .map(copy);
    },
    async appendTurns({ jobId, turns: added }) {
      const state = get();
      const job = state.jobs.get(jobId);
      if (!job) return null;
      const list = state.turns.get(jobId) ?? [];
      list.push(...copy(added));
      state.turns.set(jobId, list);
      job.turnsTotal += added.length;
      return copy(job);
    },
    async delete({ agentId, jobIds }) {
      const state = get();
      const named = new Set(jobIds.filter((id) => state.jobs.get(id)?.agentId === agentId));
      deleteJobs(state, (job) => named.has(job.id));
      state.notLearned = state.notLearned.filter((record) => !named.has(record.jobId));
      deleteIngests(state, (record) => named.has(record.jobId));
      return named.size;
    },
  };
}
