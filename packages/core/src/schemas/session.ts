import { z } from 'zod';
import { agentId, dateTime, text, threadId } from './common.js';

export const session = z
  .object({
    authenticated: z.literal(true),
    user: z.object({ id: z.string(), email: z.string(), display_name: z.string() }).strict(),
    organization_id: z.string(),
    organization_name: z.string(),
    max_upload_bytes: z.number().int().min(1),
    max_image_bytes: z.number().int().min(1),
    max_images_per_turn: z.number().int().min(1),
    max_image_bytes_per_turn: z.number().int().min(1),
  })
  .strict()
  .meta({ id: 'Session' });

export const logEntry = z
  .object({
    log_id: z.number().int(),
    user_id: z.string(),
    actor_email: z.string(),
    actor_display_name: z.string(),
    direction: z.enum(['user', 'agent', 'system']),
    route: z.enum([
      'chat',
      'chat_stream',
      'observe',
      'observe_file',
      'observe_and_respond',
      'observe_and_enrich',
      'finish_learning',
      'thread_create',
      'thread_delete',
      'agent_create',
      'agent_update',
      'agent_delete',
    ]),
    created_at: dateTime,
    thread_id: z.union([threadId, z.literal('')]),
    request_id: z.string(),
  })
  .strict()
  .meta({ id: 'ActivityLogEntry' });

export const logsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: text().max(2048).optional(),
  })
  .strict();

export const logsResponse = z
  .object({ entries: z.array(logEntry), next_cursor: z.string() })
  .strict()
  .meta({ id: 'ActivityLog' });

export type LogEntryBody = z.infer<typeof logEntry>;
export const agentPath = z.object({ agent_id: agentId });
