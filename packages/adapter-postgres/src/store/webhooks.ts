import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEventType, WebhookStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, isoOrNull, type Row } from './rows.js';

function toEndpoint(row: Row): WebhookEndpointRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    url: row.url as string,
    description: (row.description as string | null) ?? null,
    events: [...(row.events as WebhookEventType[])],
    secret: row.secret as string,
    previousSecret: (row.previous_secret as string | null) ?? null,
    previousSecretExpiresAt: row.previous_secret_expires_at === null || row.previous_secret_expires_at === undefined ? null : Number(row.previous_secret_expires_at),
    enabled: row.enabled as boolean,
    disabledReason: (row.disabled_reason as string | null) ?? null,
    consecutiveFailures: Number(row.consecutive_failures),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function toDelivery(row: Row): WebhookDeliveryRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    endpointId: row.endpoint_id as string,
    eventId: row.event_id as string,
    eventType: row.event_type as WebhookEventType,
    orderingKey: row.ordering_key as string,
    body: row.body as string,
    status: row.status as WebhookDeliveryRecord['status'],
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    lastStatusCode: row.last_status_code === null || row.last_status_code === undefined ? null : Number(row.last_status_code),
    lastError: (row.last_error as string | null) ?? null,
    lastAttemptAt: isoOrNull(row.last_attempt_at),
    seq: Number(row.seq),
    createdAt: iso(row.created_at),
  };
}

/** Endpoint fields a patch may set, by their column. */
const ENDPOINT_COLUMNS = {
  url: 'url',
  description: 'description',
  events: 'events',
  secret: 'secret',
  previousSecret: 'previous_secret',
  previousSecretExpiresAt: 'previous_secret_expires_at',
  enabled: 'enabled',
  disabledReason: 'disabled_reason',
  consecutiveFailures: 'consecutive_failures',
  updatedAt: 'updated_at',
} as const;

/** Webhook endpoints and deliveries; a claim is one `FOR UPDATE SKIP LOCKED` statement. */
export function postgresWebhooks(db: SqlClient): WebhookStore {
  const getEndpoint = async (organizationId: string, endpointId: string) => {
    const { rows } = await db.query('SELECT * FROM webhook_endpoints WHERE id = $1 AND organization_id = $2', [endpointId, organizationId]);
    return rows[0] ? toEndpoint(rows[0]) : null;
  };
  return {
    async insertEndpoint({ endpoint: e }) {
      await db.query(
        `INSERT INTO webhook_endpoints (id, organization_id, url, description, events, secret, previous_secret, previous_secret_expires_at, enabled, disabled_reason, consecutive_failures, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [e.id, e.organizationId, e.url, e.description, e.events, e.secret, e.previousSecret, e.previousSecretExpiresAt, e.enabled, e.disabledReason, e.consecutiveFailures, e.createdAt, e.updatedAt],
      );
    },
    getEndpoint: ({ organizationId, endpointId }) => getEndpoint(organizationId, endpointId),
    async listEndpoints({ organizationId }) {
      const { rows } = await db.query('SELECT * FROM webhook_endpoints WHERE organization_id = $1 ORDER BY created_at, id', [organizationId]);
      return rows.map(toEndpoint);
    },
    async updateEndpoint({ organizationId, endpointId, patch }) {
      const sets: string[] = [];
      const params: unknown[] = [endpointId, organizationId];
      for (const [field, column] of Object.entries(ENDPOINT_COLUMNS)) {
        const value = patch[field as keyof typeof patch];
        if (value === undefined) continue;
        params.push(value);
        sets.push(`${column} = $${params.length}`);
      }
      if (sets.length === 0) return getEndpoint(organizationId, endpointId);
      const { rows } = await db.query(`UPDATE webhook_endpoints SET ${sets.join(', ')} WHERE id = $1 AND organization_id = $2 RETURNING *`, params);
      return rows[0] ? toEndpoint(rows[0]) : null;
    },
    async deleteEndpoint({ organizationId, endpointId }) {
      // Its deliveries go with it (ON DELETE CASCADE).
      const { rowCount } = await db.query('DELETE FROM webhook_endpoints WHERE id = $1 AND organization_id = $2', [endpointId, organizationId]);
      return rowCount === 1;
    },
    async enqueue({ event, now }) {
      const { rowCount } = await db.query(
        `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, ordering_key, body, status, next_attempt_at, created_at)
         SELECT 'whd_' || substr($1::text, 5) || '_' || substr(e.id, 5), e.organization_id, e.id, $1, $3, $4, $5, 'pending', $6, $7
           FROM webhook_endpoints e
          WHERE e.organization_id = $2 AND $3 = ANY(e.events) -- disabled ones too: their deliveries wait
          ORDER BY e.created_at, e.id
         ON CONFLICT (id) DO NOTHING`,
        [event.id, event.organizationId, event.type, event.orderingKey, event.body, now, event.createdAt],
      );
      return rowCount;
    },
    async claim({ holder, now, leaseMs, limit, perEndpoint }) {
      // `heads`: the first pending delivery of each endpoint and ordering key (per-key order), of
      // enabled endpoints. `ready`: those due and unclaimed, numbered per endpoint after the claims
      // of that endpoint still running (any process), so at most `perEndpoint` are out at once.
      // SKIP LOCKED, before the LIMIT: concurrent claims (other processes) pass over rows another
      // claim holds and take the next ones (never places past `perEndpoint`); a row claimed and
      // committed meanwhile fails the claim test on re-check.
      const { rows } = await db.query(
        `WITH running AS (
           SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
            WHERE status = 'pending' AND claimed_by IS NOT NULL AND claim_expires_at > $2
            GROUP BY endpoint_id
         ), heads AS (
           SELECT DISTINCT ON (d.endpoint_id, d.ordering_key) d.id, d.endpoint_id, d.seq, d.next_attempt_at, d.claimed_by, d.claim_expires_at
             FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
            WHERE d.status = 'pending'
            ORDER BY d.endpoint_id, d.ordering_key, d.seq
         ), ready AS (
           SELECT h.id, h.seq, row_number() OVER (PARTITION BY h.endpoint_id ORDER BY h.seq) + COALESCE(r.n, 0) AS place
             FROM heads h LEFT JOIN running r ON r.endpoint_id = h.endpoint_id
            WHERE h.next_attempt_at <= $2 AND (h.claimed_by IS NULL OR h.claim_expires_at <= $2)
         ), candidates AS (
           SELECT d.id FROM webhook_deliveries d
            WHERE d.id IN (SELECT id FROM ready WHERE place <= $5)
              AND d.status = 'pending' AND (d.claimed_by IS NULL OR d.claim_expires_at <= $2)
            ORDER BY d.seq
            LIMIT $4
            FOR UPDATE SKIP LOCKED
         )
         UPDATE webhook_deliveries d SET claimed_by = $1, claim_expires_at = $3
           FROM candidates c WHERE d.id = c.id
         RETURNING d.*`,
        [holder, now, now + leaseMs, limit, perEndpoint],
      );
      if (rows.length === 0) return [];
      const deliveries = rows.map(toDelivery).sort((a, b) => a.seq - b.seq);
      const endpoints = await db.query('SELECT * FROM webhook_endpoints WHERE id = ANY($1)', [[...new Set(deliveries.map((d) => d.endpointId))]]);
      const byId = new Map(endpoints.rows.map((row) => [row.id as string, toEndpoint(row)]));
      return deliveries.flatMap((delivery) => {
        const endpoint = byId.get(delivery.endpointId);
        return endpoint ? [{ delivery, endpoint }] : [];
      });
    },
    async finishAttempt({ deliveryId, holder, succeeded, patch, disableAfter, disabledReason, updatedAt }) {
      // One statement: the delivery (only while this holder claims it) and the endpoint's count.
      const { rows } = await db.query(
        `WITH d AS (
           UPDATE webhook_deliveries
              SET status = $3, attempts = $4, next_attempt_at = $5, last_status_code = $6, last_error = $7, last_attempt_at = $8,
                  claimed_by = NULL, claim_expires_at = 0
            WHERE id = $1 AND claimed_by = $2
           RETURNING endpoint_id
         ), e AS (
           UPDATE webhook_endpoints w
              SET consecutive_failures = CASE WHEN $9 THEN 0 ELSE w.consecutive_failures + 1 END,
                  enabled = CASE WHEN NOT $9 AND w.enabled AND w.consecutive_failures + 1 >= $10 THEN false ELSE w.enabled END,
                  disabled_reason = CASE WHEN NOT $9 AND w.enabled AND w.consecutive_failures + 1 >= $10 THEN $11 ELSE w.disabled_reason END,
                  updated_at = CASE WHEN NOT $9 AND w.enabled AND w.consecutive_failures + 1 >= $10 THEN $12::timestamptz ELSE w.updated_at END
             FROM d WHERE w.id = d.endpoint_id
           RETURNING w.id
         )
         SELECT (SELECT count(*) FROM d) AS n`,
        [deliveryId, holder, patch.status, patch.attempts, patch.nextAttemptAt, patch.lastStatusCode, patch.lastError, patch.lastAttemptAt, succeeded, disableAfter, disabledReason, updatedAt],
      );
      return Number(rows[0]?.n ?? 0) === 1;
    },
    async pruneDeliveries({ before, limit }) {
      const { rowCount } = await db.query(
        // Finished ones, and pending ones kept for a disabled endpoint past the retention.
        `DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM (
             (SELECT id, created_at FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2)
             UNION ALL
             (SELECT d.id, d.created_at FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND NOT e.enabled
               WHERE d.status = 'pending' AND d.created_at < $1 ORDER BY d.created_at LIMIT $2)
           ) expired ORDER BY created_at LIMIT $2)`,
        [before, limit],
      );
      return rowCount;
    },
    async listDeliveries({ organizationId, endpointId, limit, beforeSeq }) {
      const { rows } = await db.query(
        `SELECT * FROM webhook_deliveries WHERE endpoint_id = $1 AND organization_id = $2 AND ($3::bigint IS NULL OR seq < $3)
          ORDER BY seq DESC LIMIT $4`,
        [endpointId, organizationId, beforeSeq ?? null, limit],
      );
      return rows.map(toDelivery);
    },
  };
}
