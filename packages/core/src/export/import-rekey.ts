import type { IdGenerator } from '../ids/ids.js';
import type { MemorySourceRef } from '../ports/memory-index.js';
import type { Checked } from './check-file.js';

/** Old id -> new id of an import's threads, observation jobs and memories. */
export type Rekey = {
  thread(id: string): string;
  job(id: string): string;
  memory(id: string): string;
  /** A source's content id in the target organization (one exported without bytes keeps its id). */
  source(id: string): string;
  /** A memory's source reference with its thread, job and source re-keyed. */
  ref(ref: MemorySourceRef): MemorySourceRef;
  /** Whether the file has a `job` line of this (old) id. */
  knownJob(id: string): boolean;
  readonly maps: { thread_: Map<string, string>; obs_: Map<string, string>; mem_: Map<string, string> };
};

/**
 * An import's new ids, made once per old id (with `keepIds`, the old ids themselves). New job and
 * memory ids are made in the order of the old ones, so ties that retrieval breaks by id fall the
 * same way in the copy (the file lists memories newest first).
 */
export function createRekey({ keepIds, ids, checked }: { keepIds: boolean; ids: IdGenerator; checked: Checked }): Rekey {
  const maps = { thread_: new Map<string, string>(), obs_: new Map<string, string>(), mem_: new Map<string, string>() };
  const remap = (prefix: 'thread_' | 'obs_' | 'mem_') => {
    const map = maps[prefix];
    return (id: string) => {
      let next = map.get(id);
      if (next === undefined) map.set(id, (next = keepIds ? id : ids(prefix)));
      return next;
    };
  };
  const thread = remap('thread_');
  const job = remap('obs_');
  const fresh = remap('mem_');
  // A memory id learning made, `mem_<job>_<turn>_<piece>`, follows its job's new id: a receipt lists
  // the turn's memories in the same (piece) order and learning resumed on the copy writes the ids
  // it would have. Other memory ids are made anew.
  const memory = (id: string) => {
    const learned = keepIds || maps.mem_.has(id) ? null : /^mem_(.+)_(\d+)_(\d+)$/.exec(id);
    const newJob = learned ? maps.obs_.get(`obs_${learned[1]}`) : undefined;
    if (learned && newJob !== undefined) maps.mem_.set(id, `mem_${newJob.slice(4)}_${learned[2]}_${learned[3]}`);
    return fresh(id);
  };
  for (const id of [...checked.jobIds].sort()) job(id);
  for (const id of [...checked.memoryIds].sort()) memory(id);
  const jobIds = new Set(checked.jobIds);
  const source = (id: string) => checked.sourceIds.get(id) ?? id;
  const ref = (r: MemorySourceRef): MemorySourceRef =>
    r.kind === 'document'
      ? { ...r, threadId: thread(r.threadId), observationId: job(r.observationId), sourceId: source(r.sourceId) }
      : { ...r, threadId: thread(r.threadId), observationId: job(r.observationId) };
  return { thread, job, memory, source, ref, knownJob: (id) => jobIds.has(id), maps };
}
