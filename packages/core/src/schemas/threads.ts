import { z } from 'zod';
import { agentId, dateTime, metadataObject, text, threadId } from './common.js';

export const message = z
  .object({
    speaker: z.string(),
    text: z.string(),
    timestamp: z.string(),
    source_ids: z.array(z.string()),
  })
  .strict()
  .meta({ id: 'Message' });

export const thread = z
  .object({
    agent_id: agentId,
    thread_id: threadId,
    status: z.enum(['provisioning', 'ready', 'deleting', 'deleted']),
    created_at: dateTime,
    updated_at: dateTime,
    title: z.string().min(1).max(200),
    metadata: metadataObject,
    messages: z.array(message).max(200).optional(),
  })
  .strict()
  .meta({ id: 'Thread' });

/** `POST /v1/agents/{agent_id}/threads` (DESIGN "Decisions"; title defaults to "Untitled"). */
export const createThreadBody = z
  .object({
    title: text().min(1).max(200).optional(),
    metadata: metadataObject.optional(),
  })
  .strict()
  .meta({ id: 'CreateThreadRequest' });

export const threadDeleteAccepted = z
  .object({ agent_id: agentId, thread_id: threadId, status: z.literal('deleting') })
  .strict()
  .meta({ id: 'ThreadDeleteAccepted' });

export type MessageBody = z.infer<typeof message>;
