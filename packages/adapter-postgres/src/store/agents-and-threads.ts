import type { AgentRecord, AgentStore, MessageRecord, MessageStore, ThreadRecord, ThreadStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, json, type Row } from './rows.js';
import { insertLogEntries } from './logs-and-leases.js';

function toAgent(row: Row): AgentRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    status: row.status as AgentRecord['status'],
    config: row.config as AgentRecord['config'],
    visibility: 'external',
    resumedFromTurn: Number(row.resumed_from_turn),
    restoreFrom: (row.restore_from as string | null) ?? null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function toThread(row: Row): ThreadRecord {
  return {
    id: row.id as string,
    agentId: row.agent_id as string,
    organizationId: row.organization_id as string,
    endUserId: (row.end_user_id as string | null) ?? null,
    status: row.status as ThreadRecord['status'],
    title: row.title as string,
    metadata: row.metadata as Record<string, unknown>,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

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

/** Agents; an insert counts live agents under the organization's row lock. */
export function postgresAgents(db: SqlClient): AgentStore {
  return {
    insert({ agent, maxLive }) {
      return db.transaction(async (tx) => {
        const { rows: locked } = await tx.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [agent.organizationId]);
        if (locked.length === 0) return false;
        const { rows } = await tx.query<{ live: string }>(
          "SELECT count(*) AS live FROM agents WHERE organization_id = $1 AND status NOT IN ('deleting', 'deleted')",
          [agent.organizationId],
        );
        if (Number(rows[0]?.live ?? 0) >= maxLive) return false;
        await tx.query(
          `INSERT INTO agents (id, organization_id, status, config, visibility, resumed_from_turn, restore_from, created_at, updated_at)
           VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9)`,
          [agent.id, agent.organizationId, agent.status, json(agent.config), agent.visibility, agent.resumedFromTurn, agent.restoreFrom, agent.createdAt, agent.updatedAt],
        );
        return true;
      });
    },
    async get({ organizationId, agentId }) {
      const { rows } = await db.query('SELECT * FROM agents WHERE id = $1 AND organization_id = $2', [agentId, organizationId]);
      return rows[0] ? toAgent(rows[0]) : null;
    },
    async list({ organizationId }) {
      const { rows } = await db.query(
        "SELECT * FROM agents WHERE organization_id = $1 AND status NOT IN ('deleting', 'deleted') ORDER BY created_at DESC, id DESC",
        [organizationId],
      );
      return rows.map(toAgent);
    },
    async listByStatus({ statuses }) {
      const { rows } = await db.query('SELECT * FROM agents WHERE status = ANY($1::text[]) ORDER BY created_at, id', [statuses]);
      return rows.map(toAgent);
    },
    async update({ organizationId, agentId, patch, updatedAt }) {
      const { rows } = await db.query(
        `UPDATE agents SET
           status = COALESCE($3, status),
           config = COALESCE($4::jsonb, config),
           resumed_from_turn = COALESCE($5, resumed_from_turn),
           restore_from = CASE WHEN $6::boolean THEN $7 ELSE restore_from END,
           updated_at = $8
         WHERE id = $1 AND organization_id = $2 RETURNING *`,
        [
          agentId,
          organizationId,
          patch.status ?? null,
          patch.config === undefined ? null : json(patch.config),
          patch.resumedFromTurn ?? null,
          'restoreFrom' in patch,
          patch.restoreFrom ?? null,
          updatedAt,
        ],
      );
      return rows[0] ? toAgent(rows[0]) : null;
    },
    async delete({ organizationId, agentId }) {
      // Threads, messages and logs go by ON DELETE CASCADE.
      await db.query('DELETE FROM agents WHERE id = $1 AND organization_id = $2', [agentId, organizationId]);
    },
  };
}

/** Threads of an agent. */
export function postgresThreads(db: SqlClient): ThreadStore {
  return {
    async insert({ thread }) {
      await db.query(
        `INSERT INTO threads (id, agent_id, organization_id, end_user_id, status, title, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9)`,
        [thread.id, thread.agentId, thread.organizationId, thread.endUserId, thread.status, thread.title, json(thread.metadata), thread.createdAt, thread.updatedAt],
      );
    },
    async get({ agentId, threadId }) {
      const { rows } = await db.query('SELECT * FROM threads WHERE id = $1 AND agent_id = $2', [threadId, agentId]);
      return rows[0] ? toThread(rows[0]) : null;
    },
    async list({ agentId, endUserId }) {
      const { rows } =
        endUserId === undefined
          ? await db.query(
              "SELECT * FROM threads WHERE agent_id = $1 AND status NOT IN ('deleting', 'deleted') ORDER BY created_at DESC, id DESC",
              [agentId],
            )
          : await db.query(
              "SELECT * FROM threads WHERE agent_id = $1 AND end_user_id = $2 AND status NOT IN ('deleting', 'deleted') ORDER BY created_at DESC, id DESC",
              [agentId, endUserId],
            );
      return rows.map(toThread);
    },
    async listByStatus({ statuses }) {
      const { rows } = await db.query('SELECT * FROM threads WHERE status = ANY($1::text[]) ORDER BY created_at, id', [statuses]);
      return rows.map(toThread);
    },
    async update({ agentId, threadId, patch, updatedAt }) {
      const { rows } = await db.query(
        `UPDATE threads SET status = COALESCE($3, status), title = COALESCE($4, title), metadata = COALESCE($5::jsonb, metadata), updated_at = $6
         WHERE id = $1 AND agent_id = $2 RETURNING *`,
        [threadId, agentId, patch.status ?? null, patch.title ?? null, patch.metadata === undefined ? null : json(patch.metadata), updatedAt],
      );
      return rows[0] ? toThread(rows[0]) : null;
    },
    async delete({ agentId, threadId }) {
      await db.query('DELETE FROM threads WHERE id = $1 AND agent_id = $2', [threadId, agentId]);
    },
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
