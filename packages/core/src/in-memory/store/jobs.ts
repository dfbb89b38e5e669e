import { copy, deleteIngests, deleteJobs, type State } from './state.js';
import { FINAL_JOB_STATUSES, type JobRecord, type JobStore } from '../../ports/store/index.js';

const isUnfinished = (job: JobRecord) => !FINAL_JOB_STATUSES.includes(job.status);

/** Jobs in process memory (a job's turns are inserted and appended with it; `turns.ts` reads and sets them). */
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
