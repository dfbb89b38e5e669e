import { describeError } from '../service/logger.js';
import { checkExtractionPolicy, keepExtractionPolicy, stampPolicyVersion } from '../policy/extraction-policy.js';
import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import { activityEntry } from '../logs/activity.js';
import { dropOriginals, forgetReplays, type Reclaimer } from '../erasures/erase-work.js';
import type { AgentConfig, AgentRecord } from '../ports/store/index.js';
import { createAgentBody, patchAgentBody } from '../schemas/agents.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody } from '../validation/parse.js';
import { findAgent, isHiddenAgent } from './lookup.js';
import { abandonedImports } from '../export/agent-import.js';
import { presentAgent } from './present.js';
import type { AgentDeleteOutput, AgentListOutput, AgentOutput } from '../schemas/outputs.js';
import type { MemoryService } from '../memory-service.js';
import type { AgentRequest, CallerRequest, CreateAgentRequest, UpdateAgentRequest } from '../service/requests.js';

/**
 * The agents area: `service.agents` and the lifecycle work behind it. Creation copies the memories
 * of `restore_from` in the background; deletion removes the agent's memories, then the agent.
 */
export function createAgents(context: ServiceContext, reclaimer: Reclaimer) {
  async function threadsFor(caller: Caller, agent: AgentRecord) {
    return context.store.threads.list({ agentId: agent.id, ...(caller.endUserId === null ? {} : { endUserId: caller.endUserId }) });
  }

  /**
   * Creation work: with `restore_from`, copies the other agent's memories; it had learned its own
   * turns plus what it restored. Resolves the number of turns restored.
   */
  async function restore(agent: AgentRecord): Promise<{ resumedFromTurn: number }> {
    if (agent.restoreFrom === null) return { resumedFromTurn: 0 };
    const source = await context.store.agents.get({ organizationId: agent.organizationId, agentId: agent.restoreFrom });
    if (!source) throw new Error(`restore source ${agent.restoreFrom} vanished`);
    await context.index.deleteBy({ agentId: agent.id });
    await context.index.copyAgent({ fromAgentId: source.id, toAgentId: agent.id, toOrganizationId: agent.organizationId, newId: () => context.ids('mem_') });
    return { resumedFromTurn: source.resumedFromTurn + (await context.store.turns.countCommitted({ agentId: source.id })) };
  }

  /** Finishes creation work: `initializing` -> `ready` (or `failed`). Also run on start for leftovers. */
  async function initialize(agent: AgentRecord): Promise<void> {
    try {
      const { resumedFromTurn } = await restore(agent);
      await context.store.agents.update({
        organizationId: agent.organizationId,
        agentId: agent.id,
        patch: { status: 'ready', resumedFromTurn, restoreFrom: null },
        updatedAt: context.nowIso(),
      });
    } catch (error) {
      context.logger.error('agent initialization failed', { agentId: agent.id, error: describeError(error) });
      await context.store.agents.update({
        organizationId: agent.organizationId,
        agentId: agent.id,
        patch: { status: 'failed' },
        updatedAt: context.nowIso(),
      });
    }
  }

  /** Removes the agent and everything under it. Also run on start for agents left `deleting`. */
  async function destroy(agent: AgentRecord): Promise<void> {
    const sources: string[] = [];
    for (const thread of await context.store.threads.list({ agentId: agent.id })) {
      sources.push(...(await context.store.uploads.listByThread({ agentId: agent.id, threadId: thread.id })).map((upload) => upload.sourceId));
    }
    await context.index.deleteBy({ agentId: agent.id });
    await context.store.agents.delete({ organizationId: agent.organizationId, agentId: agent.id });
    // Leaves no copy (issue 30): replays naming the agent, originals no other upload uses, then the space.
    await forgetReplays(context, agent.organizationId, [agent.id]);
    await dropOriginals(context, agent.organizationId, sources);
    // Its exports, their files and the erasure marker (issue 41).
    await context.blobs.deletePrefix({ prefix: `exports/${agent.organizationId}/${agent.id}/` });
    void reclaimer.schedule();
  }

  /**
   * Resumes what a stopped process left: agents still initializing or left deleting, and agents
   * left `importing` by an import that was killed (on a shared store, only those whose import lease
   * has lapsed: another process may still be writing one), which are removed like deleted ones.
   */
  async function resume(): Promise<void> {
    for (const agent of await context.store.agents.listByStatus({ statuses: ['initializing', 'deleting'] })) {
      if (agent.status === 'initializing') context.background.run('agent initialize', { agentId: agent.id }, () => initialize(agent));
      else context.background.run('agent delete', { agentId: agent.id }, () => destroy(agent));
    }
    for (const agent of await abandonedImports(context)) {
      context.logger.warn('removing an agent a stopped import left half-written', { agentId: agent.id });
      context.background.run('agent delete', { agentId: agent.id }, () => destroy(agent));
    }
  }

  const agents = {
    /** `POST /v1/agents` -> 202 Agent (`initializing`, ready once creation work finishes). */
    async create({ caller, body }: CreateAgentRequest): Promise<AgentOutput> {
      const input = parseBody(createAgentBody, body);
      checkExtractionPolicy(context, input.agent_config);
      if (input.restore_from !== undefined) {
        // The source may be `failed` too (DESIGN "Decisions"), but must be the caller's.
        const source = await context.store.agents.get({ organizationId: caller.organizationId, agentId: input.restore_from });
        if (!source || isHiddenAgent(source)) {
          throw new ServiceError('agent_not_found', `Agent ${input.restore_from} named in restore_from was not found.`);
        }
      }
      const now = context.nowIso();
      const agent: AgentRecord = {
        id: context.ids('agent_'),
        organizationId: caller.organizationId,
        status: 'initializing',
        config: stampPolicyVersion(input.agent_config, null),
        visibility: 'external',
        resumedFromTurn: 0,
        restoreFrom: input.restore_from ?? null,
        createdAt: now,
        updatedAt: now,
      };
      const inserted = await context.store.agents.insert({ agent, maxLive: caller.limits.maxAgents });
      if (!inserted) {
        throw new ServiceError('agent_quota_exceeded', `The organization already owns ${caller.limits.maxAgents} agents; delete one first.`);
      }
      await context.store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: null, route: 'agent_create' })] });
      context.background.run('agent initialize', { agentId: agent.id }, () => initialize(agent));
      return presentAgent(agent, []);
    },

    /** `GET /v1/agents`: live agents, newest first, without threads. */
    async list({ caller }: CallerRequest): Promise<AgentListOutput> {
      const agents = await context.store.agents.list({ organizationId: caller.organizationId });
      return agents.map((agent) => presentAgent(agent, []));
    },

    /** `GET /v1/agents/{agent_id}` with the threads the caller reaches. */
    async get({ caller, agentId }: AgentRequest): Promise<AgentOutput> {
      const agent = await findAgent(context, caller, agentId);
      return presentAgent(agent, await threadsFor(caller, agent));
    },

    /** `PATCH /v1/agents/{agent_id}`: only supplied fields change; `agent_config` is replaced whole. */
    async update({ caller, agentId, body }: UpdateAgentRequest): Promise<AgentOutput> {
      const input = parseBody(patchAgentBody, body);
      if (input.agent_config !== undefined) checkExtractionPolicy(context, input.agent_config);
      let agent = await findAgent(context, caller, agentId);
      if (input.agent_config !== undefined) {
        const updated = await context.store.agents.update({
          organizationId: caller.organizationId,
          agentId: agent.id,
          patch: { config: keepExtractionPolicy(keepMemoryScope(input.agent_config, agent.config), agent.config) },
          updatedAt: context.nowIso(),
        });
        if (!updated) throw new ServiceError('agent_not_found', `Agent ${agentId} was not found.`);
        agent = updated;
        await context.store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: null, route: 'agent_update' })] });
      }
      return presentAgent(agent, await threadsFor(caller, agent));
    },

    /** `DELETE /v1/agents/{agent_id}` -> 202 `{ agent_id, status: "deleting" }`; then 404. */
    async delete({ caller, agentId }: AgentRequest): Promise<AgentDeleteOutput> {
      const agent = await findAgent(context, caller, agentId);
      const deleting = await context.store.agents.update({
        organizationId: caller.organizationId,
        agentId: agent.id,
        patch: { status: 'deleting' },
        updatedAt: context.nowIso(),
      });
      if (!deleting) throw new ServiceError('agent_not_found', `Agent ${agentId} was not found.`);
      context.background.run('agent delete', { agentId: agent.id }, () => destroy(deleting));
      return { agent_id: agent.id, status: 'deleting' };
    },
  } satisfies MemoryService['agents'];

  return { agents, resume };
}

export type Agents = ReturnType<typeof createAgents>;

/**
 * The config a PATCH stores: the body's, whole (spec), except that a `memory_scope` the body omits
 * keeps the stored one (issue 42): narrowing who reads whose memory never lapses because a client
 * that does not know the extension changed the role. Widening takes `"memory_scope": "agent"`.
 * Decay and the review mode are kept the same way.
 */
function keepMemoryScope(config: AgentConfig, stored: AgentConfig): AgentConfig {
  const scoped = config.memory_scope === undefined && stored.memory_scope !== undefined ? { ...config, memory_scope: stored.memory_scope } : config;
  // Likewise decay (issue 42); `"memory_decay": {}` switches it off.
  const decaying = scoped.memory_decay === undefined && stored.memory_decay !== undefined ? { ...scoped, memory_decay: stored.memory_decay } : scoped;
  // And the review mode (issue 43): `"review_mode": "off"` switches it off.
  return decaying.review_mode === undefined && stored.review_mode !== undefined ? { ...decaying, review_mode: stored.review_mode } : decaying;
}
