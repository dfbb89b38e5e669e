import type { DraftRef } from '../ports/memory-writer.js';

/**
 * The id learning gives the memory a writer drafted as `piece` of a job's turn
 * (`mem_<job ulid>_<turn>_<piece>`): deterministic, so a resumed turn replaces, never duplicates.
 */
export function draftId(jobId: string, ref: DraftRef): string {
  return `mem_${jobId.slice(4)}_${ref.turnIndex}_${ref.piece}`;
}
