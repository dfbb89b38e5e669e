import type {
  AgentRecord,
  JobRecord,
  KeyRecord,
  LearningRecord,
  LogRecord,
  MessageRecord,
  OrganizationRecord,
  Store,
  StoreAreas,
  ThreadRecord,
  TurnRecord,
  TurnState,
} from '@memory-agents/core';
import { migrate } from './migrate.js';
import { patchRow, type PatchColumn } from './patch-row.js';
import { postgresDocumentAreas } from './postgres-documents.js';
import { postgresLedger, postgresRateLimits } from './postgres-ledger.js';
import { STORE_MIGRATIONS } from './migrations/index.js';
import { openSqlClient, type SqlClient, type SqlConnectionOptions } from './sql-client.js';

/**
 * Options of `postgresStore`: where the database is. Pass exactly one of `client`, `pool`,
 * `connectionString`, `pglite` or `dataDir`.
 */
export type PostgresStoreOptions = SqlConnectionOptions & {
  /** An open `SqlClient` shared with other adapters (e.g. the memory index on the same PGlite). */
  client?: SqlClient;
};

type Row = Record<string, unknown>;

const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString();
const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value));

function toOrganization(row: Row): OrganizationRecord {
  return { id: row.id as string, name: row.name as string, limits: row.limits as OrganizationRecord['limits'], createdAt: iso(row.created_at) };
}

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

const json = (value: unknown) => JSON.stringify(value);
const FINAL = "('committed', 'failed', 'cancelled')";

function toJob(row: Row): JobRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    threadId: row.thread_id as string,
    endUserId: (row.end_user_id as string | null) ?? null,
    requestId: row.request_id as string,
    kind: row.kind as JobRecord['kind'],
    status: row.status as JobRecord['status'],
    seq: Number(row.seq),
    turnsTotal: Number(row.turns_total),
    turnsProcessed: Number(row.turns_processed),
    error: (row.error as string | null) ?? null,
    queued: row.queued as boolean,
    resumedAt: isoOrNull(row.resumed_at),
    learning: (row.learning as JobRecord['learning']) ?? null,
    details: row.details as Record<string, unknown>,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function toTurn(row: Row): TurnRecord {
  return {
    jobId: row.job_id as string,
    turnIndex: Number(row.turn_index),
    speaker: row.speaker as string,
    text: row.text as string,
    timestamp: row.sent_at as string,
    tags: row.tags as string[],
    state: row.state as TurnState,
    failureReason: (row.failure_reason as string | null) ?? null,
    details: row.details as Record<string, unknown>,
  };
}

function toLearning(row: Row): LearningRecord {
  return {
    id: Number(row.id),
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    threadId: row.thread_id as string,
    jobId: row.job_id as string,
    requestId: row.request_id as string,
    ranges: row.ranges as LearningRecord['ranges'],
    reason: row.reason as string,
    message: row.message as string,
    refundedCredits: row.refunded_credits === null || row.refunded_credits === undefined ? null : String(row.refunded_credits),
    reported: row.reported as boolean,
    createdAt: iso(row.created_at),
  };
}

/** Column names of the job fields `update` may patch. */
const JOB_COLUMNS: Record<string, PatchColumn> = {
  endUserId: { column: 'end_user_id' },
  requestId: { column: 'request_id' },
  kind: { column: 'kind' },
  status: { column: 'status' },
  turnsTotal: { column: 'turns_total' },
  turnsProcessed: { column: 'turns_processed' },
  error: { column: 'error' },
  queued: { column: 'queued' },
  resumedAt: { column: 'resumed_at', cast: 'timestamptz' },
  learning: { column: 'learning', cast: 'jsonb', encode: (value) => (value === null ? null : json(value)) },
  details: { column: 'details', cast: 'jsonb', encode: json },
  createdAt: { column: 'created_at', cast: 'timestamptz' },
  updatedAt: { column: 'updated_at', cast: 'timestamptz' },
};

/** Builds the store areas over one client (the pool, or one transaction's connection). */
function areas(db: SqlClient): StoreAreas {
  return {
    ...postgresDocumentAreas(db),
    ledger: postgresLedger(db),
    rateLimits: postgresRateLimits(db),
    organizations: {
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
    },
    keys: {
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
    },
    agents: {
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
    },
    threads: {
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
    },
    messages: {
      async append({ messages }) {
        if (messages.length === 0) return;
        // One statement keeps the batch's order in `seq` (WITH ORDINALITY).
        await db.query(
          `INSERT INTO messages (thread_id, agent_id, speaker, text, sent_at, source_ids)
           SELECT t, a, s, x, ts, src::jsonb FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
             WITH ORDINALITY AS u(t, a, s, x, ts, src, n) ORDER BY n`,
          [
            messages.map((m) => m.threadId),
            messages.map((m) => m.agentId),
            messages.map((m) => m.speaker),
            messages.map((m) => m.text),
            messages.map((m) => m.timestamp),
            messages.map((m) => json(m.sourceIds)),
          ],
        );
      },
      async listRecent({ threadId, limit }) {
        const { rows } = await db.query('SELECT * FROM (SELECT * FROM messages WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2) recent ORDER BY seq', [
          threadId,
          limit,
        ]);
        return rows.map(toMessage);
      },
    },
    logs: {
      async append({ entries }) {
        if (entries.length === 0) return [];
        const { rows } = await db.query<{ log_id: string }>(
          `INSERT INTO activity_logs (organization_id, agent_id, thread_id, user_id, actor_email, actor_display_name, direction, route, request_id, created_at)
           SELECT o, a, t, u, e, d, dir, r, req, c::timestamptz
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
             WITH ORDINALITY AS x(o, a, t, u, e, d, dir, r, req, c, n) ORDER BY n
           RETURNING log_id`,
          [
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
        );
        return rows.map((row) => Number(row.log_id)).sort((a, b) => a - b);
      },
      async list({ agentId, limit, beforeLogId }) {
        const { rows } =
          beforeLogId === undefined
            ? await db.query('SELECT * FROM activity_logs WHERE agent_id = $1 ORDER BY log_id DESC LIMIT $2', [agentId, limit])
            : await db.query('SELECT * FROM activity_logs WHERE agent_id = $1 AND log_id < $3 ORDER BY log_id DESC LIMIT $2', [agentId, limit, beforeLogId]);
        return rows.map(toLog);
      },
    },
    leases: {
      async acquire({ name, holder, ttlMs, now }) {
        // One statement: a free, expired or own lease is taken; a live foreign one is left alone.
        const { rows } = await db.query(
          `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3)
           ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
             WHERE leases.holder = EXCLUDED.holder OR leases.expires_at <= $4
           RETURNING name`,
          [name, holder, now + ttlMs, now],
        );
        return rows.length === 1;
      },
      async renew({ name, holder, ttlMs, now }) {
        const { rowCount } = await db.query('UPDATE leases SET expires_at = $3 WHERE name = $1 AND holder = $2', [name, holder, now + ttlMs]);
        return rowCount === 1;
      },
      async release({ name, holder }) {
        await db.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
      },
      async get({ name }) {
        const { rows } = await db.query('SELECT * FROM leases WHERE name = $1', [name]);
        const row = rows[0];
        return row ? { name: row.name as string, holder: row.holder as string, expiresAt: Number(row.expires_at) } : null;
      },
    },
    jobs: {
      insert({ job, turns, onlyIfIdle }) {
        return db.transaction(async (tx) => {
          // The agent row lock is the agent's single ingestion slot: concurrent inserts serialize here.
          const { rows: locked } = await tx.query('SELECT id FROM agents WHERE id = $1 FOR UPDATE', [job.agentId]);
          if (locked.length === 0) return null;
          if (onlyIfIdle) {
            const { rows } = await tx.query(`SELECT 1 FROM jobs WHERE agent_id = $1 AND status NOT IN ${FINAL} LIMIT 1`, [job.agentId]);
            if (rows.length > 0) return null;
          }
          const { rows } = await tx.query(
            `INSERT INTO jobs (id, organization_id, agent_id, thread_id, end_user_id, request_id, kind, status, turns_total, turns_processed,
                               error, queued, resumed_at, learning, details, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15::jsonb, $16, $17) RETURNING *`,
            [
              job.id, job.organizationId, job.agentId, job.threadId, job.endUserId, job.requestId, job.kind, job.status, job.turnsTotal,
              job.turnsProcessed, job.error, job.queued, job.resumedAt, job.learning === null ? null : json(job.learning), json(job.details),
              job.createdAt, job.updatedAt,
            ],
          );
          if (turns.length > 0) {
            await tx.query(
              `INSERT INTO job_turns (job_id, turn_index, speaker, text, sent_at, tags, state, failure_reason, details)
               SELECT $1, i, s, x, ts, tg::jsonb, st, NULL, d::jsonb
                 FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS u(i, s, x, ts, tg, st, d)`,
              [
                job.id,
                turns.map((t) => t.turnIndex),
                turns.map((t) => t.speaker),
                turns.map((t) => t.text),
                turns.map((t) => t.timestamp),
                turns.map((t) => json(t.tags)),
                turns.map((t) => t.state),
                turns.map((t) => json(t.details)),
              ],
            );
          }
          return toJob(rows[0]!);
        });
      },
      async get({ agentId, jobId }) {
        const { rows } = await db.query('SELECT * FROM jobs WHERE id = $1 AND agent_id = $2', [jobId, agentId]);
        return rows[0] ? toJob(rows[0]) : null;
      },
      async update({ jobId, patch }) {
        const row = await patchRow(db, 'jobs', 'id', jobId, patch, JOB_COLUMNS);
        return row ? toJob(row) : null;
      },
      async nextForAgent({ agentId }) {
        const { rows } = await db.query(`SELECT * FROM jobs WHERE agent_id = $1 AND status NOT IN ${FINAL} ORDER BY seq LIMIT 1`, [agentId]);
        return rows[0] ? toJob(rows[0]) : null;
      },
      async countAhead({ threadId, seq }) {
        const { rows } = await db.query<{ ahead: string }>(
          `SELECT count(*) AS ahead FROM jobs WHERE thread_id = $1 AND seq < $2 AND status NOT IN ${FINAL}`,
          [threadId, seq],
        );
        return Number(rows[0]?.ahead ?? 0);
      },
      async agentsWithUnfinishedJobs() {
        const { rows } = await db.query<{ agent_id: string }>(`SELECT DISTINCT agent_id FROM jobs WHERE status NOT IN ${FINAL}`);
        return rows.map((row) => row.agent_id);
      },
      async listTurns({ jobId, fromIndex, limit }) {
        const { rows } = await db.query('SELECT * FROM job_turns WHERE job_id = $1 AND turn_index >= $2 ORDER BY turn_index LIMIT $3', [
          jobId,
          fromIndex,
          limit,
        ]);
        return rows.map(toTurn);
      },
      setTurnStates({ jobId, turnIndexes, state, failureReason }) {
        return db.transaction(async (tx) => {
          await tx.query('UPDATE job_turns SET state = $3, failure_reason = $4 WHERE job_id = $1 AND turn_index = ANY($2::int[])', [
            jobId,
            turnIndexes,
            state,
            state === 'failed' ? (failureReason ?? null) : null,
          ]);
          await tx.query(
            "UPDATE jobs SET turns_processed = (SELECT count(*) FROM job_turns WHERE job_id = $1 AND state <> 'pending') WHERE id = $1",
            [jobId],
          );
        });
      },
      async turnCounts({ jobId }) {
        const { rows } = await db.query<{ state: TurnState; n: string }>('SELECT state, count(*) AS n FROM job_turns WHERE job_id = $1 GROUP BY state', [jobId]);
        const counts: Record<TurnState, number> = { pending: 0, read: 0, committed: 0, failed: 0 };
        for (const row of rows) counts[row.state] = Number(row.n);
        return counts;
      },
      async countCommittedTurns({ agentId }) {
        const { rows } = await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM job_turns t JOIN jobs j ON j.id = t.job_id WHERE j.agent_id = $1 AND t.state = 'committed'",
          [agentId],
        );
        return Number(rows[0]?.n ?? 0);
      },
      async cancelForThread({ threadId, at }) {
        const { rows } = await db.query<{ id: string }>(
          `UPDATE jobs SET status = 'cancelled', updated_at = $2 WHERE thread_id = $1 AND status NOT IN ${FINAL} RETURNING id`,
          [threadId, at],
        );
        return rows.map((row) => row.id);
      },
      async listUnfinished({ organizationId }) {
        const { rows } = await db.query(`SELECT * FROM jobs WHERE organization_id = $1 AND status NOT IN ${FINAL} ORDER BY seq`, [organizationId]);
        return rows.map(toJob);
      },
      appendTurns({ jobId, turns }) {
        return db.transaction(async (tx) => {
          const { rows: locked } = await tx.query('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [jobId]);
          if (locked.length === 0) return null;
          if (turns.length > 0) {
            await tx.query(
              `INSERT INTO job_turns (job_id, turn_index, speaker, text, sent_at, tags, state, failure_reason, details)
               SELECT $1, i, s, x, ts, tg::jsonb, st, NULL, d::jsonb
                 FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS u(i, s, x, ts, tg, st, d)`,
              [
                jobId,
                turns.map((t) => t.turnIndex),
                turns.map((t) => t.speaker),
                turns.map((t) => t.text),
                turns.map((t) => t.timestamp),
                turns.map((t) => json(t.tags)),
                turns.map((t) => t.state),
                turns.map((t) => json(t.details)),
              ],
            );
          }
          const { rows } = await tx.query('UPDATE jobs SET turns_total = turns_total + $2 WHERE id = $1 RETURNING *', [jobId, turns.length]);
          return toJob(rows[0]!);
        });
      },
    },
    learning: {
      async insert({ record }) {
        const { rows } = await db.query<{ id: string }>(
          `INSERT INTO learning_records (organization_id, agent_id, thread_id, job_id, request_id, ranges, reason, message, refunded_credits, created_at)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9::numeric, $10) RETURNING id`,
          [
            record.organizationId, record.agentId, record.threadId, record.jobId, record.requestId, json(record.ranges), record.reason,
            record.message, record.refundedCredits, record.createdAt,
          ],
        );
        return Number(rows[0]!.id);
      },
      async list({ threadId, limit, beforeId }) {
        const { rows } =
          beforeId === undefined
            ? await db.query('SELECT * FROM learning_records WHERE thread_id = $1 ORDER BY id DESC LIMIT $2', [threadId, limit])
            : await db.query('SELECT * FROM learning_records WHERE thread_id = $1 AND id < $3 ORDER BY id DESC LIMIT $2', [threadId, limit, beforeId]);
        return rows.map(toLearning);
      },
      async takeUnreported({ threadId }) {
        // One statement: concurrent callers each get disjoint records.
        const { rows } = await db.query(
          `UPDATE learning_records SET reported = true
            WHERE id IN (SELECT id FROM learning_records WHERE thread_id = $1 AND NOT reported FOR UPDATE SKIP LOCKED)
            RETURNING *`,
          [threadId],
        );
        return rows.map(toLearning).sort((a, b) => a.id - b.id);
      },
    },
  };
}

/**
 * The `Store` on PostgreSQL: node-postgres (`pg.Pool`, any managed Postgres) or PGlite (embedded,
 * file-backed or in memory), running the same SQL. Migrations are applied by `init()`.
 *
 * @example
 * const store = postgresStore({ dataDir: './.memory-agents/pgdata' });        // embedded
 * const shared = postgresStore({ connectionString: process.env.DATABASE_URL }); // many processes
 */
export function postgresStore(options: PostgresStoreOptions): Store {
  let client: SqlClient | null = options.client ?? null;
  const ownsClient = options.client === undefined;
  let bound: StoreAreas | null = null;
  let initialized: Promise<void> | null = null;
  const open = (): StoreAreas => {
    if (!bound) throw new Error('postgresStore: call init() before use');
    return bound;
  };
  return {
    specificationVersion: 'v1',
    id: 'postgres',
    capabilities: { persistent: true, shared: options.dataDir === undefined && options.pglite === undefined },
    init() {
      initialized ??= (async () => {
        client ??= await openSqlClient(options);
        await migrate(client, 'memory_agents_migrations', STORE_MIGRATIONS);
        bound = areas(client);
      })();
      return initialized;
    },
    async close() {
      if (client && ownsClient) await client.close();
      if (ownsClient) client = null;
      bound = null;
      initialized = null;
    },
    get organizations() {
      return open().organizations;
    },
    get keys() {
      return open().keys;
    },
    get agents() {
      return open().agents;
    },
    get threads() {
      return open().threads;
    },
    get messages() {
      return open().messages;
    },
    get logs() {
      return open().logs;
    },
    get leases() {
      return open().leases;
    },
    get jobs() {
      return open().jobs;
    },
    get learning() {
      return open().learning;
    },
    get ledger() {
      return open().ledger;
    },
    get rateLimits() {
      return open().rateLimits;
    },
    get documents() {
      return open().documents;
    },
    get idempotency() {
      return open().idempotency;
    },
    get images() {
      return open().images;
    },
    transaction(fn) {
      open();
      return client!.transaction((tx) => fn(areas(tx)));
    },
  };
}
