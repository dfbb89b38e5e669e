import {
  canonicalIso,
  decodeListCursor,
  encodeListCursor,
  type MemoryListRequest,
  type MemoryHitRecord,
  type MemoryListResult,
  type MemoryPatch,
  type MemoryRecord,
} from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import type { VectorMeta } from './vectors.js';
import { unexpiredSql } from './filters.js';
import { HIT_COLUMNS, hitFromRow, timestampOf, type HitRow, type IndexTables } from './schema.js';

/** What the JS vector channel caches of a record to filter searches. */
export const vectorMeta = (record: Pick<MemoryRecord, 'source' | 'validFrom' | 'validTo' | 'expiresAt'>): VectorMeta => ({
  threadId: record.source.threadId,
  validFrom: record.validFrom,
  validTo: record.validTo,
  expiresAt: record.expiresAt === null ? null : canonicalIso(record.expiresAt),
});

/** A record `update` changed: what the vector cache keeps of it. */
type ChangedRow = { id: string; thread_id: string; valid_from: string | null; valid_to: string | null; expires_at: string | null };

/**
 * `MemoryIndex.list`: one query, filtered and ordered in SQL (`created_at`, then `id`, both
 * descending in code-unit order; core writes `created_at` in canonical ISO form, so that is time
 * order), read from (agent_id, created_at, id); a page asks for one row more to know whether
 * another follows. Date ranges compare as instants (`memory_index_ts`).
 */
export async function listRecords(client: SqlClient, tables: IndexTables, request: MemoryListRequest): Promise<MemoryListResult> {
  const position = request.cursor ? decodeListCursor(request.cursor) : null;
  if (request.threadIds?.length === 0) return { records: [], nextCursor: null };
  const params: unknown[] = [request.agentId];
  const clauses = ['agent_id = $1'];
  const add = (sql: (param: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(sql(`$${params.length}`));
  };
  if (!request.includeHistory) clauses.push('valid_to IS NULL');
  if (request.now !== undefined) clauses.push(unexpiredSql('', params, canonicalIso(request.now)));
  if (request.expiredBefore !== undefined) add((p) => `expires_at IS NOT NULL AND expires_at <= ${p}`, canonicalIso(request.expiredBefore));
  if (request.threadIds !== undefined) add((p) => `thread_id = ANY(${p}::text[])`, [...request.threadIds]);
  if (request.sourceId !== undefined) add((p) => `source_id = ${p}`, request.sourceId);
  if (request.observationId !== undefined) add((p) => `observation_id = ${p}`, request.observationId);
  if (request.speaker !== undefined) add((p) => `speaker = ${p}`, request.speaker);
  const created = timestampOf(tables, 'created_at');
  const occurred = timestampOf(tables, 'occurred_at');
  if (request.learnedAfter !== undefined) add((p) => `${created} >= ${p}::timestamptz`, canonicalIso(request.learnedAfter));
  if (request.learnedBefore !== undefined) add((p) => `${created} < ${p}::timestamptz`, canonicalIso(request.learnedBefore));
  if (request.occurredAfter !== undefined) add((p) => `${occurred} >= ${p}::timestamptz`, canonicalIso(request.occurredAfter));
  if (request.occurredBefore !== undefined) add((p) => `${occurred} < ${p}::timestamptz`, canonicalIso(request.occurredBefore));
  // A literal, case-insensitive substring: strpos has no wildcards to escape.
  if (request.textContains !== undefined) add((p) => `strpos(lower(text), lower(${p})) > 0`, request.textContains);
  if (position) {
    params.push(position.createdAt, position.id);
    const [at, id] = [`$${params.length - 1}`, `$${params.length}`];
    clauses.push(`(created_at COLLATE "C" < ${at} OR (created_at = ${at} AND id COLLATE "C" < ${id}))`);
  }
  const size = Math.max(1, Math.floor(request.limit));
  params.push(size + 1);
  const { rows } = await client.query<HitRow>(
    `SELECT ${HIT_COLUMNS} FROM ${tables.records} WHERE ${clauses.join(' AND ')}
     ORDER BY created_at COLLATE "C" DESC, id COLLATE "C" DESC LIMIT $${params.length}`,
    params,
  );
  const records = rows.slice(0, size).map(hitFromRow);
  const last = records[records.length - 1];
  return { records, nextCursor: rows.length > size && last ? encodeListCursor(last) : null };
}

/**
 * `MemoryIndex.update` inside the caller's transaction: one UPDATE for every patch (an absent
 * field keeps its value). Returns what the vector cache filters on, for the changed rows.
 */
export async function updateRecords(
  tx: SqlClient,
  tables: IndexTables,
  agentId: string,
  patches: readonly MemoryPatch[],
): Promise<ChangedRow[]> {
  const has = (key: keyof MemoryPatch) => patches.map((patch) => patch[key] !== undefined);
  const { rows } = await tx.query<ChangedRow>(
    `UPDATE ${tables.records} r SET
       valid_to = CASE WHEN u.set_valid_to THEN u.valid_to ELSE r.valid_to END,
       superseded_by = CASE WHEN u.set_superseded_by THEN u.superseded_by ELSE r.superseded_by END,
       suspicious = CASE WHEN u.set_suspicious THEN u.suspicious ELSE r.suspicious END,
       also_from = CASE WHEN u.set_also_from THEN u.also_from::jsonb ELSE r.also_from END,
       expires_at = CASE WHEN u.set_expires_at THEN u.expires_at ELSE r.expires_at END
     FROM unnest($2::text[], $3::bool[], $4::text[], $5::bool[], $6::text[], $7::bool[], $8::bool[], $9::bool[], $10::text[], $11::bool[], $12::text[])
       AS u(id, set_valid_to, valid_to, set_superseded_by, superseded_by, set_suspicious, suspicious, set_also_from, also_from, set_expires_at, expires_at)
     WHERE r.agent_id = $1 AND r.id = u.id
     RETURNING r.id, r.thread_id, r.valid_from, r.valid_to, r.expires_at`,
    [
      agentId,
      patches.map((patch) => patch.id),
      has('validTo'),
      patches.map((patch) => patch.validTo ?? null),
      has('supersededBy'),
      patches.map((patch) => patch.supersededBy ?? null),
      has('suspicious'),
      patches.map((patch) => patch.suspicious ?? false),
      has('alsoFrom'),
      patches.map((patch) => (patch.alsoFrom === undefined ? null : JSON.stringify(patch.alsoFrom))),
      has('expiresAt'),
      patches.map((patch) => (patch.expiresAt == null ? null : canonicalIso(patch.expiresAt))),
    ],
  );
  return rows;
}

/** `MemoryIndex.findDuplicates`: the agent's current records with one of the duplicate keys (read by the `duplicate_key` index). */
export async function findDuplicateRecords(client: SqlClient, tables: IndexTables, agentId: string, keys: readonly string[]): Promise<MemoryHitRecord[]> {
  const sql = `SELECT ${HIT_COLUMNS} FROM ${tables.records} WHERE agent_id = $1 AND duplicate_key = ANY($2::text[]) AND duplicate_key IS NOT NULL AND valid_to IS NULL`;
  return (await client.query<HitRow>(sql, [agentId, [...new Set(keys)]])).rows.map(hitFromRow);
}
