import type { MessageRecord, MessageStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { json, type Row } from './rows.js';
import { insertLogEntries } from './logs.js';

function toMessage(row: Row): MessageRecord {
  return {
    threadId: row.thread_id as string,
    agentId: row.agent_id as string,
    speaker: row.speaker as string,
    text: row.text as string,
    timestamp: row.sent_at as string,
    sourceIds: row.source_ids as string[],
  };
}

/** Messages of a thread, in the order they were appended. */
export function postgresMessages(db: SqlClient): MessageStore {
  return {
    async append({ messages, logEntries = [] }) {
      if (messages.length === 0 && logEntries.length === 0) return;
      // One statement keeps the batch's order in `seq` (WITH ORDINALITY); log entries ride in the
      // same statement (a data-modifying WITH), so both are stored or neither in one round trip.
      const insertMessages = `INSERT INTO messages (thread_id, agent_id, speaker, text, sent_at, source_ids)
         SELECT t, a, s, x, ts, src::jsonb FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
           WITH ORDINALITY AS u(t, a, s, x, ts, src, n) ORDER BY n`;
      const params: unknown[] = [
        messages.map((m) => m.threadId),
        messages.map((m) => m.agentId),
        messages.map((m) => m.speaker),
        messages.map((m) => m.text),
        messages.map((m) => m.timestamp),
        messages.map((m) => json(m.sourceIds)),
      ];
      if (logEntries.length === 0) {
        await db.query(insertMessages, params);
        return;
      }
      const insertLogs = insertLogEntries(logEntries, params.length);
      await db.query(`WITH inserted_messages AS (${insertMessages}) ${insertLogs.sql}`, [...params, ...insertLogs.params]);
    },
    async listRecent({ threadId, limit }) {
      const { rows } = await db.query('SELECT * FROM (SELECT * FROM messages WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2) recent ORDER BY seq', [
        threadId,
        limit,
      ]);
      return rows.map(toMessage);
    },
  };
}
