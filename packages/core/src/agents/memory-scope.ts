import type { Caller } from '../auth/caller.js';
import type { AgentRecord, ThreadRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';

/** Whose memories a person's requests read (agent config `memory_scope`, an extension, issue 42). */
export type MemoryScope = 'agent' | 'end_user';

/** The agent's memory scope: `agent` (the spec's shared memory) unless its config says `end_user`. */
export function memoryScopeOf(agent: AgentRecord): MemoryScope {
  return agent.config.memory_scope === 'end_user' ? 'end_user' : 'agent';
}

/**
 * What a read is for: `answer` (chat, `chat/stream`, observe-and-respond, observe-and-enrich,
 * recall, `retrieve`) or `inspect` (the memories API: list, get, search).
 */
export type ReadPurpose = 'answer' | 'inspect';

/**
 * The threads whose memories `caller` may read on `agent`, or `undefined` for every memory of the
 * agent: the one place every read path asks (the retrieval's and the index list's `threadIds`).
 *
 * - `end_user` scope: a person X reads the threads X created and the threads of no person
 *   (created without the header). A memory is learned in exactly one thread (a document's
 *   memories in the thread it was uploaded to), so a document uploaded in a thread of no person
 *   is shared and one uploaded in X's thread is X's. Memories naming no thread of this agent
 *   (restored with `restore_from` from another agent) are read by the organization only.
 *   The organization (no `X-SP-End-User`) reads every memory, except when it answers in a thread
 *   (`inThread`: chat, `chat/stream`, observe-and-respond, observe-and-enrich): an answer is
 *   recorded in the thread, and observe-and-respond learns it there, so it draws only on what the
 *   thread's own person reads (for a thread of no person: the threads of no person). Otherwise
 *   the organization answering in a shared thread would copy X's memories where Y reads them.
 * - `agent` scope (the spec): answering reads every memory ("learned memory is shared across the
 *   agent"); the memories API shows a person only the memories of their own threads, as before;
 *   the organization reads every memory.
 */
export async function readableThreadIds(
  context: ServiceContext,
  caller: Caller,
  agent: AgentRecord,
  purpose: ReadPurpose,
  inThread?: Pick<ThreadRecord, 'endUserId'>,
): Promise<string[] | undefined> {
  if (memoryScopeOf(agent) === 'end_user') {
    if (caller.endUserId === null && inThread === undefined) return undefined;
    // A person reaches only their own threads (findThread), so `inThread` names the caller then.
    const person = inThread === undefined ? caller.endUserId : inThread.endUserId;
    const threads = await context.store.threads.list({ agentId: agent.id });
    return threads.filter((thread) => sharedWith(thread, person)).map((thread) => thread.id);
  }
  if (caller.endUserId === null || purpose === 'answer') return undefined;
  return ownThreadIds(context, caller, agent);
}

/** The threads `caller` created (every thread without `X-SP-End-User`: `undefined`). */
export async function ownThreadIds(context: ServiceContext, caller: Caller, agent: AgentRecord): Promise<string[] | undefined> {
  if (caller.endUserId === null) return undefined;
  const threads = await context.store.threads.list({ agentId: agent.id, endUserId: caller.endUserId });
  return threads.map((thread) => thread.id);
}

/**
 * Under the `end_user` scope, whether what was learned in `thread` is read for `person` (an `eu_`
 * id, or null for no person): the thread is that person's own or a thread of no person.
 */
export function sharedWith(thread: Pick<ThreadRecord, 'endUserId'>, person: string | null): boolean {
  return thread.endUserId === null || thread.endUserId === person;
}

/**
 * The threads whose memories learning a job of `job.threadId` compares its turns with (the memory
 * writer's similarity lookups, so what a turn can supersede), or `undefined` for every memory of
 * the agent (`agent` scope). With `end_user`, only the threads of the same person (for a thread of
 * no person, the threads of no person): one person's statement never ends another's fact, nor a
 * shared one that others still read, and the writer is never shown another person's memories.
 * Duplicates merge under the same rule (merge-duplicates.ts `keepSamePerson`).
 */
export async function learningThreadIds(context: ServiceContext, job: { organizationId: string; agentId: string; threadId: string }): Promise<string[] | undefined> {
  const agent = await context.store.agents.get({ organizationId: job.organizationId, agentId: job.agentId });
  if (!agent || memoryScopeOf(agent) !== 'end_user') return undefined;
  const thread = await context.store.threads.get({ agentId: job.agentId, threadId: job.threadId });
  if (!thread) return [job.threadId];
  const person = thread.endUserId;
  const same = (await context.store.threads.list({ agentId: job.agentId })).filter((thread) => thread.endUserId === person).map((thread) => thread.id);
  return same.includes(job.threadId) ? same : [...same, job.threadId];
}
