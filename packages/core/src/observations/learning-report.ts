/** Sentences shown to a person for each learning reason (spec "ObservationLearning"). */
export const LEARNING_MESSAGES: Record<string, string> = {
  generation_failed: 'Writing the memory for these turns failed; send them again.',
  model_unavailable: 'The model that writes memories could not be reached; send these turns again.',
  generation_timeout: 'Writing the memory for these turns timed out; send them again.',
  generation_unparseable: 'The model wrote memories that could not be read; send these turns again.',
  memory_commit_shortfall: 'The memories of these turns could not be stored in the memory index; send them again.',
  embedder_mismatch: 'The memory index was built with a different embedder than the one configured; these turns were not learned.',
  earlier_turn_failed: 'An earlier turn of this request was not learned, so these were not either; send them again.',
  queue_full: 'Too much was waiting to be learned; send these turns again.',
  job_failed: 'The learning job stopped on an error of its own; send these turns again.',
  cancelled: 'The learning job was cancelled; send these turns again.',
  credits_exhausted: 'The organization ran out of credit before these turns were read; nothing was charged for them. Add credits and send them again.',
};

/** 0-based turn indexes -> 1-based inclusive ranges, merged where consecutive. */
export function turnRanges(turnIndexes: number[]): { first: number; last: number }[] {
  const sorted = [...new Set(turnIndexes)].sort((a, b) => a - b);
  const ranges: { first: number; last: number }[] = [];
  for (const index of sorted) {
    const last = ranges.at(-1);
    if (last && last.last === index) last.last = index + 1;
    else ranges.push({ first: index + 1, last: index + 1 });
  }
  return ranges;
}
