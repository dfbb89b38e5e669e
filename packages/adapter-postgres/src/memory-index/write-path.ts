import { analyze, indexedText, type MemoryRecord } from '@memory-agents/core';
import type { SqlClient } from '../sql-client.js';
import { impact, type IndexTables, type VectorKind } from './schema.js';
import { norm, vectorLiteral } from './vectors.js';

/**
 * Bumps the versions of `agentIds` inside a write transaction, in a fixed order (no deadlocks
 * between writers of several agents), and returns the new versions. The row locks taken here also
 * serialize every change to those agents' term statistics until the transaction ends.
 */
export async function bumpVersions(tx: SqlClient, tables: IndexTables, agentIds: readonly string[]): Promise<Map<string, string>> {
  const sorted = [...new Set(agentIds)].sort();
  if (sorted.length === 0) return new Map();
  const { rows } = await tx.query<{ agent_id: string; version: string | number }>(
    `INSERT INTO ${tables.agents} (agent_id, version) SELECT a, 1 FROM unnest($1::text[]) WITH ORDINALITY AS u(a, n) ORDER BY n
     ON CONFLICT (agent_id) DO UPDATE SET version = ${tables.agents}.version + 1 RETURNING agent_id, version`,
    [sorted],
  );
  return new Map(rows.map((row) => [row.agent_id, String(row.version)]));
}

/** A record's analyzed terms as stored: core's analyze(text + keywords), duplicates kept. */
export const recordTerms = (record: MemoryRecord) => analyze(indexedText(record));

/**
 * Changes to BM25's per-agent statistics: records, total terms, and per term the records holding
 * it. Added to with `+1` for a record written and `-1` for a record replaced or deleted.
 */
export class StatisticsDelta {
  private readonly agents = new Map<string, { rows: number; terms: number }>();
  private readonly frequencies = new Map<string, Map<string, number>>();

  add(agentId: string, terms: readonly string[], sign: 1 | -1): void {
    const agent = this.agents.get(agentId) ?? { rows: 0, terms: 0 };
    agent.rows += sign;
    agent.terms += sign * terms.length;
    this.agents.set(agentId, agent);
    let frequencies = this.frequencies.get(agentId);
    if (!frequencies) this.frequencies.set(agentId, (frequencies = new Map()));
    for (const term of new Set(terms)) frequencies.set(term, (frequencies.get(term) ?? 0) + sign);
  }

  /** Applies the changes; call after `bumpVersions` locked every agent involved. */
  async apply(tx: SqlClient, tables: IndexTables): Promise<void> {
    const agentIds = [...this.agents.keys()].sort();
    if (agentIds.length === 0) return;
    await tx.query(
      `UPDATE ${tables.agents} a SET row_count = a.row_count + d.rows, term_total = a.term_total + d.terms
       FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS d(agent_id, rows, terms) WHERE a.agent_id = d.agent_id`,
      [agentIds, agentIds.map((id) => this.agents.get(id)!.rows), agentIds.map((id) => this.agents.get(id)!.terms)],
    );
    const termAgents: string[] = [];
    const terms: string[] = [];
    const deltas: number[] = [];
    const decremented: [string[], string[]] = [[], []];
    for (const agentId of agentIds) {
      const frequencies = this.frequencies.get(agentId)!;
      for (const term of [...frequencies.keys()].sort()) {
        const delta = frequencies.get(term)!;
        if (delta === 0) continue;
        if (delta < 0) {
          decremented[0].push(agentId);
          decremented[1].push(term);
        }
        termAgents.push(agentId);
        terms.push(term);
        deltas.push(delta);
      }
    }
    if (terms.length === 0) return;
    await tx.query(
      `INSERT INTO ${tables.terms} AS t (agent_id, term, df) SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
       ON CONFLICT (agent_id, term) DO UPDATE SET df = t.df + excluded.df`,
      [termAgents, terms, deltas],
    );
    if (decremented[0].length === 0) return;
    await tx.query(
      `DELETE FROM ${tables.terms} t USING unnest($1::text[], $2::text[]) AS d(agent_id, term)
       WHERE t.agent_id = d.agent_id AND t.term = d.term AND t.df <= 0`,
      decremented,
    );
  }
}

/**
 * Inserts or replaces `batch` (one statement; `INSERT … SELECT FROM unnest(…)`) and its postings.
 * `replacing` false: the caller knows none of the ids exists yet (`newIds`), no postings to drop.
 */
export async function insertRows(
  sql: SqlClient,
  tables: IndexTables,
  vectorKind: VectorKind,
  batch: readonly MemoryRecord[],
  analyzed: readonly string[][],
  replacing = true,
): Promise<void> {
  const column = <T>(pick: (record: MemoryRecord) => T) => batch.map(pick);
  const documentField = <T>(record: MemoryRecord, pick: (source: Extract<MemoryRecord['source'], { kind: 'document' }>) => T): T | null =>
    record.source.kind === 'document' ? pick(record.source) : null;
  await sql.query(
    `INSERT INTO ${tables.records} (id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
       speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename)
     SELECT u.id, u.agent_id, u.organization_id, u.text, u.keywords, string_to_array(u.terms, ' '), u.term_count,
       ${vectorKind === 'pgvector' ? 'u.embedding::vector' : "decode(u.embedding, 'hex')"}, u.embedding_norm,
       u.speaker, u.occurred_at, u.created_at, u.source_kind, u.thread_id, u.observation_id, u.turn_index, u.source_id, u.page, u.filename
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::float8[],
       $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::int[], $17::text[], $18::int[], $19::text[])
       AS u(id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
         speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename)
     ON CONFLICT (id) DO UPDATE SET
       agent_id = excluded.agent_id, organization_id = excluded.organization_id, text = excluded.text,
       keywords = excluded.keywords, terms = excluded.terms, term_count = excluded.term_count,
       embedding = excluded.embedding, embedding_norm = excluded.embedding_norm, speaker = excluded.speaker,
       occurred_at = excluded.occurred_at, created_at = excluded.created_at, source_kind = excluded.source_kind,
       thread_id = excluded.thread_id, observation_id = excluded.observation_id, turn_index = excluded.turn_index,
       source_id = excluded.source_id, page = excluded.page, filename = excluded.filename`,
    [
      column((record) => record.id),
      column((record) => record.agentId),
      column((record) => record.organizationId),
      column((record) => record.text),
      column((record) => record.keywords),
      analyzed.map((terms) => terms.join(' ')),
      analyzed.map((terms) => terms.length),
      column((record) => vectorLiteral(record.vector, vectorKind)),
      column((record) => norm(record.vector)),
      column((record) => record.speaker),
      column((record) => record.occurredAt),
      column((record) => record.createdAt),
      column((record) => record.source.kind),
      column((record) => record.source.threadId),
      column((record) => record.source.observationId),
      column((record) => record.source.turnIndex),
      column((record) => documentField(record, (source) => source.sourceId)),
      column((record) => documentField(record, (source) => source.page)),
      column((record) => documentField(record, (source) => source.filename)),
    ],
  );
  // Postings: a replaced record's go first (ids not written before have none).
  if (replacing) await sql.query(`DELETE FROM ${tables.postings} WHERE id = ANY($1::text[])`, [column((record) => record.id)]);
  await sql.query(
    `INSERT INTO ${tables.postings} (agent_id, term, impact, id, tf, term_count)
     SELECT u.agent_id, t.term, ${impact('t.tf', 'u.term_count', 'a.average')}, u.id, t.tf, u.term_count
     FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS u(id, agent_id, terms, term_count)
     CROSS JOIN LATERAL (SELECT term, count(*)::int AS tf FROM unnest(string_to_array(u.terms, ' ')) AS term WHERE term <> '' GROUP BY term) t
     LEFT JOIN ${tables.agents} ag ON ag.agent_id = u.agent_id
     CROSS JOIN LATERAL (SELECT CASE WHEN ag.row_count > 0 THEN greatest(ag.term_total::float8 / ag.row_count, 1) END AS average) a`,
    [column((record) => record.id), column((record) => record.agentId), analyzed.map((terms) => terms.join(' ')), analyzed.map((terms) => terms.length)],
  );
}
