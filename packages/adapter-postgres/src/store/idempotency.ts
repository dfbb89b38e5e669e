import type { IdempotencyRecord, IdempotencyStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, type Row } from './rows.js';

function toIdempotency(row: Row): IdempotencyRecord {
  return {
    organizationId: row.organization_id as string,
    key: row.key as string,
    fingerprint: row.fingerprint as string,
    state: row.state as IdempotencyRecord['state'],
    status: row.status === null || row.status === undefined ? null : Number(row.status),
    response: (row.response as string | null) ?? null,
    createdAt: iso(row.created_at),
  };
}

/** Idempotency-Key records; a claim is one statement. */
export function postgresIdempotency(db: SqlClient): IdempotencyStore {
  return {
    async claim({ record, notBefore, inFlightNotBefore }) {
      // One statement: the insert wins, or an expired or abandoned row is replaced, or the live row is returned.
      const { rows } = await db.query(
        `INSERT INTO idempotency_keys (organization_id, key, fingerprint, state, status, response, created_at)
         VALUES ($1, $2, $3, 'in_flight', NULL, NULL, $4)
         ON CONFLICT (organization_id, key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, state = 'in_flight', status = NULL, response = NULL, created_at = EXCLUDED.created_at
           WHERE idempotency_keys.created_at < $5
              OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.created_at < $6::timestamptz)
         RETURNING organization_id`,
        [record.organizationId, record.key, record.fingerprint, record.createdAt, notBefore, inFlightNotBefore ?? null],
      );
      if (rows.length > 0) return null;
      const { rows: existing } = await db.query('SELECT * FROM idempotency_keys WHERE organization_id = $1 AND key = $2', [record.organizationId, record.key]);
      return existing[0] ? toIdempotency(existing[0]) : null;
    },
    async complete({ organizationId, key, status, response }) {
      await db.query("UPDATE idempotency_keys SET state = 'completed', status = $3, response = $4 WHERE organization_id = $1 AND key = $2", [
        organizationId,
        key,
        status,
        response,
      ]);
    },
    async release({ organizationId, key }) {
      await db.query('DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2', [organizationId, key]);
    },
    async forget({ organizationId, mentioning }) {
      const texts = mentioning.filter((text) => text !== '');
      if (texts.length === 0) return 0;
      // strpos, not LIKE: an id is matched literally.
      const { rowCount } = await db.query(
        'DELETE FROM idempotency_keys WHERE organization_id = $1 AND response IS NOT NULL AND EXISTS (SELECT 1 FROM unnest($2::text[]) AS t(x) WHERE strpos(response, t.x) > 0)',
        [organizationId, texts],
      );
      return rowCount;
    },
  };
}
