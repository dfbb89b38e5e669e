import { findAgent, findReadyAgent, findThread } from '../agents/lookup.js';
import { presentThread } from '../agents/present.js';
import { activityEntry } from '../logs/activity.js';
import { dropOriginals, eraseThread, forgetReplays, type Reclaimer } from '../erasures/erase-work.js';
import { dropExports } from '../export/erased-exports.js';
import type { ThreadRecord } from '../ports/store/index.js';
import { createThreadBody } from '../schemas/threads.js';
import type { LearningRecordOutput, ThreadDeleteOutput, ThreadOutput } from '../schemas/outputs.js';
import type { MemoryService } from '../memory-service.js';
import type { CreateThreadRequest, LearningRequest, ThreadRequest } from '../service/requests.js';
import { learningQuery } from '../schemas/observations.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody, parseQuery } from '../validation/parse.js';
import { createThreadTurns } from './turns.js';

/** Messages returned when one thread is read (spec "Thread": up to the 200 most recent). */
export const THREAD_MESSAGES_LIMIT = 200;
export const DEFAULT_THREAD_TITLE = 'Untitled';

/**
 * The threads area: `service.threads` (with `learning`, the turns of a thread that were not learned)
 * and thread cleanup: a deleted thread's jobs are cancelled and its memories removed, then the thread.
 */
export function createThreads(context: ServiceContext, reclaimer: Reclaimer) {
  /**
   * Leaves no copy (issue 30): the thread's memories (no byte left in the index's storage), its
   * rows, the idempotent replays naming it or its uploads, the originals no other upload uses;
   * then the database reclaims the space in the background.
   */
  async function destroy(thread: ThreadRecord): Promise<void> {
    const uploads = await eraseThread(context, thread);
    await forgetReplays(context, thread.organizationId, [thread.id, ...uploads.map((upload) => upload.jobId)]);
    await dropOriginals(context, thread.organizationId, uploads.map((upload) => upload.sourceId));
    await dropExports(context, thread.organizationId, thread.agentId);
    void reclaimer.schedule();
  }

  /**
   * A thread delete the last process did not finish (it stopped, or the index failed): its
   * memories and messages go now, as the 202 promised.
   */
  async function resume(): Promise<void> {
    for (const thread of await context.store.threads.listByStatus({ statuses: ['deleting'] })) {
      context.background.run('thread delete', { threadId: thread.id }, () => destroy(thread));
    }
  }

  const threads = {

    /** `POST /v1/agents/{agent_id}/threads` -> 201 Thread, recorded against the end user. */
    async create({ caller, agentId, body }: CreateThreadRequest): Promise<ThreadOutput> {
      const input = parseBody(createThreadBody, body ?? {});
      const agent = await findReadyAgent(context, caller, agentId);
      const now = context.nowIso();
      const thread: ThreadRecord = {
        id: context.ids('thread_'),
        agentId: agent.id,
        organizationId: caller.organizationId,
        endUserId: caller.endUserId,
        status: 'ready',
        title: input.title ?? DEFAULT_THREAD_TITLE,
        metadata: input.metadata ?? {},
        createdAt: now,
        updatedAt: now,
      };
      await context.store.threads.insert({ thread });
      await context.store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route: 'thread_create' })] });
      return presentThread(thread, []);
    },

    /** `GET .../threads/{thread_id}` with up to 200 recent messages. */
    async get({ caller, agentId, threadId }: ThreadRequest): Promise<ThreadOutput> {
      const agent = await findAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const messages = await context.store.messages.listRecent({ threadId: thread.id, limit: THREAD_MESSAGES_LIMIT });
      return presentThread(thread, messages);
    },

    /** `DELETE .../threads/{thread_id}` -> 202; the thread, its messages and memories go. */
    async delete({ caller, agentId, threadId }: ThreadRequest): Promise<ThreadDeleteOutput> {
      const agent = await findAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const deleting = await context.store.threads.update({
        agentId: agent.id,
        threadId: thread.id,
        patch: { status: 'deleting' },
        updatedAt: context.nowIso(),
      });
      await context.store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route: 'thread_delete' })] });
      context.background.run('thread delete', { threadId: thread.id }, () => destroy(deleting ?? thread));
      return { agent_id: agent.id, thread_id: thread.id, status: 'deleting' };
    },

    /** `GET .../threads/{thread_id}/learning`: every record of turns not learned, newest first. */
    async learning({ caller, agentId, threadId, query = {} }: LearningRequest): Promise<LearningRecordOutput> {
      const { limit, cursor } = parseQuery(learningQuery, query);
      const agent = await findAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const records = await context.store.notLearned.list({ threadId: thread.id, limit: limit + 1, ...(cursor === undefined ? {} : { beforeId: Number(cursor) }) });
      const page = records.slice(0, limit);
      return {
        agent_id: agent.id,
        thread_id: thread.id,
        entries: page.map((record) => ({
          observation_id: record.jobId,
          not_learned_turns: record.ranges,
          reason: record.reason,
          message: record.message,
          refunded_credits: record.refundedCredits,
          action: 'resend' as const,
          created_at: record.createdAt,
        })),
        next_cursor: records.length > limit ? String(page.at(-1)!.id) : null,
      };
    },

    /** `GET .../threads/{thread_id}/turns` (an extension, issue 45): the observed turns in order, paged. */
    turns: createThreadTurns(context),
  } satisfies MemoryService['threads'];

  return { threads, resume };
}

export type Threads = ReturnType<typeof createThreads>;
