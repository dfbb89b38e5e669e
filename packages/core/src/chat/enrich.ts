import type { z } from 'zod';
import type { Caller } from '../auth/caller.js';
import { billedWords } from '../credits/index.js';
import type { BindResponse } from '../idempotency/idempotency.js';
import { activityEntry } from '../logs/activity.js';
import type { InsertJob } from '../observations/insert-job.js';
import type { AgentRecord, ThreadRecord } from '../ports/store/index.js';
import type { observeAndEnrichBody } from '../schemas/observations.js';
import type { ObserveAndEnrichOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import type { Answering } from './answering.js';
import { timed, type Stage } from './stages.js';

export type ObserveAndEnrichInput = z.output<typeof observeAndEnrichBody>;

/** `observe-and-enrich` after validation: learns the message, returns memory context, no answer. */
export async function enrich({ context, insertJob, answering, caller, agent, thread, input, bind }: {
  context: ServiceContext;
  insertJob: InsertJob;
  answering: Answering;
  caller: Caller;
  agent: AgentRecord;
  thread: ThreadRecord;
  input: ObserveAndEnrichInput;
  /** Records the response of a keyed call in the job's transaction; null without a key. */
  bind: BindResponse<ObserveAndEnrichOutput> | null;
}): Promise<ObserveAndEnrichOutput> {
  // No answer is written: the message is charged when its job reads it; refuse now if it cannot be.
  const release = await context.limiter.acquireAnswer(caller);
  try {
    await context.credits.requireFunds(caller.organizationId, billedWords(input.message));
    const stages: Stage[] = [];
    const retrieval = await timed(stages, 'memory_context', () => answering.recall(caller, agent, input.message, input.max_context_chars, undefined, thread));
    const citations = await answering.contextCitations(retrieval);
    let result: ObserveAndEnrichOutput | null = null;
    const recordStart = performance.now();
    // The message's job, its activity entry and (with a key) the recorded body commit together.
    return await insertJob({
      caller,
      thread,
      turns: [{ speaker: 'user', text: input.message, timestamp: context.nowIso(), tags: [] }],
      kind: 'respond',
      onlyIfIdle: false,
      onStored: async (store, job) => {
        await store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route: 'observe_and_enrich' })] });
        // The `record` stage ends here, so a replay of the recorded body equals this answer.
        stages.push({ name: 'record', duration_ms: Math.max(0, Math.round(performance.now() - recordStart)) });
        const result: ObserveAndEnrichOutput = {
          agent_id: agent.id,
          thread_id: thread.id,
          turn_id: input.turn_id,
          memory_context: retrieval.memoryContext,
          citations,
          stages,
          observation_id: job.id,
        };
        if (bind) await bind(store, result);
        return result;
      },
    });
  } finally {
    await release();
  }
}
