import type { KeyRecord, KeyStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, isoOrNull, type Row } from './rows.js';
import { toOrganization } from './organizations.js';

function toKey(row: Row): KeyRecord {
  return {
    keyId: row.key_id as string,
    organizationId: row.organization_id as string,
    secretHash: row.secret_hash as string,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

/** API keys; an insert counts live keys under the organization's row lock. */
export function postgresKeys(db: SqlClient): KeyStore {
  return {
    insert({ key, maxLive, now }) {
      return db.transaction(async (tx) => {
        // The organization row lock serializes concurrent inserts, so the count stays exact.
        const { rows: locked } = await tx.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [key.organizationId]);
        if (locked.length === 0) return false;
        const { rows } = await tx.query<{ live: string }>(
          'SELECT count(*) AS live FROM api_keys WHERE organization_id = $1 AND revoked_at IS NULL AND expires_at > $2',
          [key.organizationId, now],
        );
        if (Number(rows[0]?.live ?? 0) >= maxLive) return false;
        await tx.query(
          'INSERT INTO api_keys (key_id, organization_id, secret_hash, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)',
          [key.keyId, key.organizationId, key.secretHash, key.createdAt, key.expiresAt, key.revokedAt],
        );
        return true;
      });
    },
    async get({ keyId }) {
      const { rows } = await db.query('SELECT * FROM api_keys WHERE key_id = $1', [keyId]);
      return rows[0] ? toKey(rows[0]) : null;
    },
    async getWithOrganization({ keyId }) {
      // One indexed statement per authenticated request on a shared database.
      const { rows } = await db.query(
        `SELECT k.key_id, k.organization_id, k.secret_hash, k.created_at, k.expires_at, k.revoked_at,
                o.id, o.name, o.limits, o.created_at AS organization_created_at
           FROM api_keys k JOIN organizations o ON o.id = k.organization_id WHERE k.key_id = $1`,
        [keyId],
      );
      const row = rows[0];
      return row ? { key: toKey(row), organization: toOrganization({ ...row, created_at: row.organization_created_at }) } : null;
    },
    async list({ organizationId }) {
      const { rows } = await db.query('SELECT * FROM api_keys WHERE organization_id = $1 ORDER BY created_at DESC, key_id DESC', [organizationId]);
      return rows.map(toKey);
    },
    async revoke({ keyId, at }) {
      const { rows } = await db.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE key_id = $1 RETURNING *', [keyId, at]);
      return rows[0] ? toKey(rows[0]) : null;
    },
  };
}
