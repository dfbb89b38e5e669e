import type { OrganizationRecord, OrganizationStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, json, type Row } from './rows.js';

export function toOrganization(row: Row): OrganizationRecord {
  return { id: row.id as string, name: row.name as string, limits: row.limits as OrganizationRecord['limits'], createdAt: iso(row.created_at) };
}

/** Organizations and their limit overrides. */
export function postgresOrganizations(db: SqlClient): OrganizationStore {
  return {
    async insert({ organization }) {
      await db.query('INSERT INTO organizations (id, name, limits, created_at) VALUES ($1, $2, $3::jsonb, $4)', [
        organization.id,
        organization.name,
        json(organization.limits),
        organization.createdAt,
      ]);
    },
    async get({ id }) {
      const { rows } = await db.query('SELECT * FROM organizations WHERE id = $1', [id]);
      return rows[0] ? toOrganization(rows[0]) : null;
    },
    async list() {
      const { rows } = await db.query('SELECT * FROM organizations ORDER BY created_at, id');
      return rows.map(toOrganization);
    },
    async updateLimits({ id, limits }) {
      const { rows } = await db.query('UPDATE organizations SET limits = $2::jsonb WHERE id = $1 RETURNING *', [id, json(limits)]);
      return rows[0] ? toOrganization(rows[0]) : null;
    },
  };
}
