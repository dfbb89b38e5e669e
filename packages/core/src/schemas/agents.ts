import { z } from 'zod';
import { agentId, dateTime, metadataObject, text } from './common.js';
import { thread } from './threads.js';

/**
 * Whose memories a request acting for a person (`X-SP-End-User`) draws on (an extension, issue 42):
 * `agent` (the spec's default: every memory of the agent) or `end_user` (that person's threads and
 * threads of no person). See `agents/memory-scope.ts`.
 */
export const memoryScope = z.enum(['agent', 'end_user']).meta({ id: 'MemoryScope' });

export const agentConfig = z
  .object({
    role: text().min(1).max(200),
    objective: text().min(1).max(2000),
    metadata: metadataObject.optional(),
    memory_scope: memoryScope
      .optional()
      .describe(
        'An extension (issue 42). "agent" (the default when absent): learned memory is shared across the agent, and a request with X-SP-End-User answers from every memory. ' +
          '"end_user": a request with X-SP-End-User reads only memories learned in that person\'s threads and in threads of no person. Kept by a PATCH whose agent_config omits it.',
      ),
  })
  .strict()
  .meta({ id: 'AgentConfig' });

export const agentStatus = z.enum(['initializing', 'ready', 'failed', 'deleting', 'deleted']);

export const agent = z
  .object({
    agent_id: agentId,
    status: agentStatus,
    created_at: dateTime,
    updated_at: dateTime,
    access: z.literal('owner'),
    agent_config: agentConfig,
    expires_at: dateTime.nullable(),
    resumed_from_turn: z.number().int().min(0),
    visibility: z.literal('external'),
    threads: z.array(thread),
  })
  .strict()
  .meta({ id: 'Agent' });

/** `POST /v1/agents` (DESIGN "Decisions"). */
export const createAgentBody = z
  .object({
    agent_config: agentConfig,
    visibility: z.literal('external').optional(),
    restore_from: agentId.optional(),
  })
  .strict()
  .meta({ id: 'CreateAgentRequest' });

/** `PATCH /v1/agents/{agent_id}`: every field optional; `agent_config` replaces the whole config. */
export const patchAgentBody = z
  .object({ agent_config: agentConfig.optional() })
  .strict()
  .meta({ id: 'PatchAgentRequest' });

/** `DELETE` of an agent or a thread (DESIGN "Decisions"). */
export const agentDeleteAccepted = z
  .object({ agent_id: agentId, status: z.literal('deleting') })
  .strict()
  .meta({ id: 'AgentDeleteAccepted' });

export const agentList = z.array(agent).meta({ id: 'AgentList' });

