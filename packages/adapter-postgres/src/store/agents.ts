import type { AgentRecord, AgentStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, json, type Row } from './rows.js';

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
        "SELECT * FROM agents WHERE organization_id = $1 AND status NOT IN ('importing', 'deleting', 'deleted') ORDER BY created_at DESC, id DESC",
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
