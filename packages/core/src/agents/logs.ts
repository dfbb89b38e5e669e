import { findAgent } from './lookup.js';
import type { LogsRequest } from '../service/requests.js';
import { ServiceError } from '../errors/index.js';
import { logsQuery } from '../schemas/session.js';
import type { LogsOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import { parseQuery } from '../validation/parse.js';
import { presentLogEntry } from '../logs/activity.js';

/**
 * `GET /v1/agents/{agent_id}/logs`: newest first. The cursor is the id of the last entry of the
 * previous page; `next_cursor` is "" on the last page (the spec types it as a string).
 */
export async function listLogs(context: ServiceContext, { caller, agentId, query = {} }: LogsRequest): Promise<LogsOutput> {
  const { limit, cursor } = parseQuery(logsQuery, query);
  let beforeLogId: number | undefined;
  if (cursor !== undefined && cursor !== '') {
    if (!/^[1-9][0-9]{0,15}$/.test(cursor)) throw new ServiceError('invalid_request', 'cursor is not a value returned as next_cursor.', { status: 400 });
    beforeLogId = Number(cursor);
  }
  const agent = await findAgent(context, caller, agentId);
  const records = await context.store.logs.list({ agentId: agent.id, limit: limit + 1, ...(beforeLogId === undefined ? {} : { beforeLogId }) });
  const page = records.slice(0, limit);
  const last = page.at(-1);
  return { entries: page.map(presentLogEntry), next_cursor: records.length > limit && last ? String(last.logId) : '' };
}
