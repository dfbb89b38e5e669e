import type { MemoryDeleteRequest } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { StatisticsDelta, bumpVersions, deletePostings } from './write-path.js';
import type { IndexTables } from './schema.js';

/**
 * `MemoryIndex.deleteBy` inside its transaction (the caller has handled empty id and thread
 * lists, which match nothing): the matching records with their postings, and the statistics they
 * counted in. Resolves the agent's new versions and the deleted ids.
 */
export async function deleteRecords(tx: SqlClient, tables: IndexTables, request: MemoryDeleteRequest): Promise<{ versions: Map<string, string>; deleted: string[] }> {
  const { agentId, threadId, sourceId, observationId, ids, threadIds } = request;
  const clauses = ['agent_id = $1'];
  const params: unknown[] = [agentId];
  const add = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    params.push(value);
    clauses.push(`${column} = $${params.length}`);
  };
  add('thread_id', threadId);
  add('observation_id', observationId);
  add('source_id', sourceId);
  if (ids !== undefined) {
    params.push([...ids]);
    clauses.push(`id = ANY($${params.length}::text[])`);
  }
  if (threadIds !== undefined) {
    params.push([...threadIds]);
    clauses.push(`thread_id = ANY($${params.length}::text[])`);
  }
  const versions = await bumpVersions(tx, tables, [agentId]);
  const { rows } = await tx.query<{ id: string; terms: string[]; rec: string }>(
    `DELETE FROM ${tables.records} WHERE ${clauses.join(' AND ')} RETURNING id, terms, rec`,
    params,
  );
  await deletePostings(tx, tables, rows.map((row) => row.rec));
  const delta = new StatisticsDelta();
  for (const row of rows) delta.add(agentId, row.terms, -1);
  await delta.apply(tx, tables);
  return { versions, deleted: rows.map((row) => row.id) };
}

/**
 * `MemoryIndex.copyAgent` inside its transaction: every record of `fromAgentId` copied under new
 * ids to `toAgentId`, with its statistics, terms and postings; `supersededBy` follows its target to
 * the copy. Resolves how many records were copied.
 */
export async function copyRecords(
  tx: SqlClient,
  tables: IndexTables,
  { fromAgentId, toAgentId, toOrganizationId, newId }: { fromAgentId: string; toAgentId: string; toOrganizationId: string; newId: () => string },
): Promise<{ copied: number }> {
  const { records } = tables;
  const { rows } = await tx.query<{ id: string }>(`SELECT id FROM ${records} WHERE agent_id = $1 ORDER BY id COLLATE "C"`, [fromAgentId]);
  if (rows.length === 0) return { copied: 0 };
  const oldIds = rows.map((row) => row.id);
  const newIds = oldIds.map(() => newId());
  await bumpVersions(tx, tables, [toAgentId]);
  // supersededBy follows its target to the copy (kept as it is when the target is not copied).
  await tx.query(
    `INSERT INTO ${records} (id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
       speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename,
       writer, job_id, span_start, span_end, also_from, valid_from, valid_to, superseded_by, suspicious, duplicate_key, expires_at)
     SELECT m.new_id, $3, $4, r.text, r.keywords, r.terms, r.term_count, r.embedding, r.embedding_norm,
       r.speaker, r.occurred_at, r.created_at, r.source_kind, r.thread_id, r.observation_id, r.turn_index, r.source_id, r.page, r.filename,
       r.writer, r.job_id, r.span_start, r.span_end, r.also_from, r.valid_from, r.valid_to,
       coalesce(t.new_id, r.superseded_by), r.suspicious, r.duplicate_key, r.expires_at
     FROM unnest($1::text[], $2::text[]) AS m(old_id, new_id) JOIN ${records} r ON r.id = m.old_id
     LEFT JOIN unnest($1::text[], $2::text[]) AS t(old_id, new_id) ON t.old_id = r.superseded_by`,
    [oldIds, newIds, toAgentId, toOrganizationId],
  );
  // The copies' statistics, computed from the copies themselves (new ids: nothing replaced).
  await tx.query(
    `UPDATE ${tables.agents} a SET row_count = a.row_count + c.n, term_total = a.term_total + c.total
     FROM (SELECT count(*) AS n, coalesce(sum(term_count), 0) AS total FROM ${records} WHERE id = ANY($1::text[])) c WHERE a.agent_id = $2`,
    [newIds, toAgentId],
  );
  await tx.query(
    `INSERT INTO ${tables.terms} AS t (agent_id, term, df)
     SELECT $2, u.term, count(*) FROM ${records} r CROSS JOIN LATERAL (SELECT DISTINCT unnest(r.terms) AS term) u
     WHERE r.id = ANY($1::text[]) GROUP BY u.term
     ON CONFLICT (agent_id, term) DO UPDATE SET df = t.df + excluded.df`,
    [newIds, toAgentId],
  );
  // The copies' postings: the originals' under the target agent's term ids (just ensured).
  await tx.query(
    `INSERT INTO ${tables.postings} (term_id, rec, impact, tf, term_count)
     SELECT target.term_id, copy.rec, p.impact, p.tf, p.term_count
     FROM unnest($1::text[], $2::text[]) AS m(old_id, new_id)
     JOIN ${records} original ON original.id = m.old_id JOIN ${records} copy ON copy.id = m.new_id
     JOIN ${tables.postings} p ON p.rec = original.rec
     JOIN ${tables.terms} source ON source.term_id = p.term_id
     JOIN ${tables.terms} target ON target.agent_id = $3 AND target.term = source.term`,
    [oldIds, newIds, toAgentId],
  );
  return { copied: oldIds.length };
}
