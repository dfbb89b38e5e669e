import { copy, type State } from './state.js';
import type { ReceiptStore } from '../../ports/store/index.js';

/** What jobs' learning did (their receipts' entries) in process memory. */
export function inMemoryReceipts(get: () => State): ReceiptStore {
  return {
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
  };
}
