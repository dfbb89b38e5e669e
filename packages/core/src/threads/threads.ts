import { findAgent, findReadyAgent, findThread } from '../agents/lookup.js';
import { presentThread } from '../agents/present.js';
import type { Caller } from '../auth/caller.js';
import { activityEntry } from '../logs/activity.js';
import type { ThreadRecord } from '../ports/store/index.js';
import { createThreadBody, type ThreadBody } from '../schemas/threads.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody } from '../validation/parse.js';

/** Messages returned when one thread is read (spec "Thread": up to the 200 most recent). */
export const THREAD_MESSAGES_LIMIT = 200;
export const DEFAULT_THREAD_TITLE = 'Untitled';

/** Hook to remove what a thread owns outside the store (its memories in the index). */
export type ThreadLifecycle = { destroy(thread: ThreadRecord): Promise<void> };

export function createThreads(context: ServiceContext, lifecycle: ThreadLifecycle) {
  async function destroy(thread: ThreadRecord): Promise<void> {
    await lifecycle.destroy(thread);
    await context.store.threads.delete({ agentId: thread.agentId, threadId: thread.id });
  }

  return {
    destroy,

    /** `POST /v1/agents/{agent_id}/threads` -> 201 Thread, recorded against the end user. */
    async create(caller: Caller, agentId: string, body: unknown): Promise<ThreadBody> {
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
    async get(caller: Caller, agentId: string, threadId: string): Promise<ThreadBody> {
      const agent = await findAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const messages = await context.store.messages.listRecent({ threadId: thread.id, limit: THREAD_MESSAGES_LIMIT });
      return presentThread(thread, messages);
    },

    /** `DELETE .../threads/{thread_id}` -> 202; the thread, its messages and memories go. */
    async delete(caller: Caller, agentId: string, threadId: string): Promise<{ agent_id: string; thread_id: string; status: 'deleting' }> {
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
  };
}

export type Threads = ReturnType<typeof createThreads>;
