import type { LogRecord, LogStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, type Row } from './rows.js';

function toLog(row: Row): LogRecord {
  return {
    logId: Number(row.log_id),
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    threadId: row.thread_id as string,
    userId: row.user_id as string,
    actorEmail: row.actor_email as string,
    actorDisplayName: row.actor_display_name as string,
    direction: row.direction as string,
    route: row.route as string,
    requestId: row.request_id as string,
    createdAt: iso(row.created_at),
  };
}

/**
 * The statement that inserts activity-log entries in order (one statement keeps the batch's order in
 * `log_id`), its parameters numbered from `$${offset + 1}` so it can follow another statement's.
 */
export function insertLogEntries(entries: readonly Omit<LogRecord, 'logId'>[], offset: number): { sql: string; params: unknown[] } {
  const p = (n: number) => `$${offset + n}::text[]`;
  return {
    sql: `INSERT INTO activity_logs (organization_id, agent_id, thread_id, user_id, actor_email, actor_display_name, direction, route, request_id, created_at)
         SELECT o, a, t, u, e, d, dir, r, req, c::timestamptz
           FROM unnest(${[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(p).join(', ')})
           WITH ORDINALITY AS x(o, a, t, u, e, d, dir, r, req, c, n) ORDER BY n`,
    params: [
      entries.map((e) => e.organizationId),
      entries.map((e) => e.agentId),
      entries.map((e) => e.threadId),
      entries.map((e) => e.userId),
      entries.map((e) => e.actorEmail),
      entries.map((e) => e.actorDisplayName),
      entries.map((e) => e.direction),
      entries.map((e) => e.route),
      entries.map((e) => e.requestId),
      entries.map((e) => e.createdAt),
    ],
  };
}

/** Activity logs (who used an agent, when). */
export function postgresLogs(db: SqlClient): LogStore {
  return {
    async append({ entries }) {
      if (entries.length === 0) return [];
      const insert = insertLogEntries(entries, 0);
      const { rows } = await db.query<{ log_id: string }>(`${insert.sql} RETURNING log_id`, insert.params);
      return rows.map((row) => Number(row.log_id)).sort((a, b) => a - b);
    },
    async list({ agentId, limit, beforeLogId }) {
      const { rows } =
        beforeLogId === undefined
          ? await db.query('SELECT * FROM activity_logs WHERE agent_id = $1 ORDER BY log_id DESC LIMIT $2', [agentId, limit])
          : await db.query('SELECT * FROM activity_logs WHERE agent_id = $1 AND log_id < $3 ORDER BY log_id DESC LIMIT $2', [agentId, limit, beforeLogId]);
      return rows.map(toLog);
    },
  };
}
