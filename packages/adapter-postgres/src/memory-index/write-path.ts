import { analyze, canonicalIso, duplicateKey, indexedText, type MemoryRecord } from '@memory-agents/core/adapter';
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
    await this.applyTerms(tx, tables);
    await this.applyAgents(tx, tables);
  }

  /** The agents' record counts and total lengths (BM25's N and average length). */
  async applyAgents(tx: SqlClient, tables: IndexTables): Promise<void> {
    const agentIds = [...this.agents.keys()].sort();
    if (agentIds.length === 0) return;
    await tx.query(
      `UPDATE ${tables.agents} a SET row_count = a.row_count + d.rows, term_total = a.term_total + d.terms
       FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS d(agent_id, rows, terms) WHERE a.agent_id = d.agent_id`,
      [agentIds, agentIds.map((id) => this.agents.get(id)!.rows), agentIds.map((id) => this.agents.get(id)!.terms)],
    );
  }

  /**
   * The document frequencies: a term new to an agent gets its row (and `term_id`) here, so call
   * this before writing the postings of new records; a term no record of the agent holds any more
   * loses its row (its postings went with the records). Returns the `term_id` of every term the
   * written records hold (per agent), for their postings.
   */
  async applyTerms(tx: SqlClient, tables: IndexTables): Promise<TermIds> {
    const termIds: TermIds = new Map();
    const agentIds = [...this.agents.keys()].sort();
    if (agentIds.length === 0) return termIds;
    const termAgents: string[] = [];
    const terms: string[] = [];
    const deltas: number[] = [];
    const decremented: [string[], string[]] = [[], []];
    for (const agentId of agentIds) {
      const frequencies = this.frequencies.get(agentId)!;
      for (const term of [...frequencies.keys()].sort()) {
        // A term whose count does not change (a record replaced by one holding it too) is written
        // as well (df + 0): its id comes back with the others'.
        const delta = frequencies.get(term)!;
        if (delta < 0) {
          decremented[0].push(agentId);
          decremented[1].push(term);
        }
        termAgents.push(agentId);
        terms.push(term);
        deltas.push(delta);
      }
    }
    if (terms.length === 0) return termIds;
    const { rows } = await tx.query<{ agent_id: string; term: string; term_id: string }>(
      `INSERT INTO ${tables.terms} AS t (agent_id, term, df) SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
       ON CONFLICT (agent_id, term) DO UPDATE SET df = t.df + excluded.df RETURNING agent_id, term, term_id`,
      [termAgents, terms, deltas],
    );
    for (const row of rows) {
      let ids = termIds.get(row.agent_id);
      if (!ids) termIds.set(row.agent_id, (ids = new Map()));
      ids.set(row.term, String(row.term_id));
    }
    if (decremented[0].length === 0) return termIds;
    await tx.query(
      `DELETE FROM ${tables.terms} t USING unnest($1::text[], $2::text[]) AS d(agent_id, term)
       WHERE t.agent_id = d.agent_id AND t.term = d.term AND t.df <= 0`,
      decremented,
    );
    return termIds;
  }
}

/** Per agent, the `term_id` of each term (as text: a bigint). */
export type TermIds = Map<string, Map<string, string>>;

/**
 * Inserts or replaces `batch` and writes its postings, in one statement (`INSERT … SELECT FROM
 * unnest(…)` into the records, whose `RETURNING` feeds the postings' insert). Call after
 * `StatisticsDelta.applyTerms` (every term of the batch has its `term_id`) and after deleting the
 * postings of the records being replaced.
 */
export async function insertRows(
  sql: SqlClient,
  tables: IndexTables,
  vectorKind: VectorKind,
  batch: readonly MemoryRecord[],
  analyzed: readonly string[][],
  termIds: TermIds,
): Promise<void> {
  // The postings, built here: per record (its 1-based position in the batch) and distinct term, the
  // term's id and its frequency in the record.
  const postingRecord: number[] = [];
  const postingTerm: string[] = [];
  const postingTf: number[] = [];
  batch.forEach((record, i) => {
    const ids = termIds.get(record.agentId);
    const frequencies = new Map<string, number>();
    for (const term of analyzed[i]!) if (term !== '') frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    for (const [term, tf] of frequencies) {
      const id = ids?.get(term);
      if (id === undefined) throw new Error(`postgresMemoryIndex: no term id for ${JSON.stringify(term)} of agent ${record.agentId}`);
      postingRecord.push(i + 1);
      postingTerm.push(id);
      postingTf.push(tf);
    }
  });
  const column = <T>(pick: (record: MemoryRecord) => T) => batch.map(pick);
  const documentField = <T>(record: MemoryRecord, pick: (source: Extract<MemoryRecord['source'], { kind: 'document' }>) => T): T | null =>
    record.source.kind === 'document' ? pick(record.source) : null;
  await sql.query(
    `WITH written AS (
       INSERT INTO ${tables.records} (id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
         speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename,
         writer, job_id, span_start, span_end, also_from, valid_from, valid_to, superseded_by, suspicious, duplicate_key, expires_at)
       SELECT u.id, u.agent_id, u.organization_id, u.text, u.keywords, string_to_array(u.terms, ' '), u.term_count,
         ${vectorKind === 'pgvector' ? 'u.embedding::vector' : "decode(u.embedding, 'hex')"}, u.embedding_norm,
         u.speaker, u.occurred_at, u.created_at, u.source_kind, u.thread_id, u.observation_id, u.turn_index, u.source_id, u.page, u.filename,
         u.writer, u.job_id, u.span_start, u.span_end, u.also_from::jsonb, u.valid_from, u.valid_to, u.superseded_by, u.suspicious, u.duplicate_key, u.expires_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::float8[],
         $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::int[], $17::text[], $18::int[], $19::text[],
         $23::text[], $24::text[], $25::int[], $26::int[], $27::text[], $28::text[], $29::text[], $30::text[], $31::bool[], $32::text[], $33::text[])
         AS u(id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
           speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename,
           writer, job_id, span_start, span_end, also_from, valid_from, valid_to, superseded_by, suspicious, duplicate_key, expires_at)
       ON CONFLICT (id) DO UPDATE SET
         agent_id = excluded.agent_id, organization_id = excluded.organization_id, text = excluded.text,
         keywords = excluded.keywords, terms = excluded.terms, term_count = excluded.term_count,
         embedding = excluded.embedding, embedding_norm = excluded.embedding_norm, speaker = excluded.speaker,
         occurred_at = excluded.occurred_at, created_at = excluded.created_at, source_kind = excluded.source_kind,
         thread_id = excluded.thread_id, observation_id = excluded.observation_id, turn_index = excluded.turn_index,
         source_id = excluded.source_id, page = excluded.page, filename = excluded.filename,
         writer = excluded.writer, job_id = excluded.job_id, span_start = excluded.span_start, span_end = excluded.span_end,
         also_from = excluded.also_from, valid_from = excluded.valid_from, valid_to = excluded.valid_to,
         superseded_by = excluded.superseded_by, suspicious = excluded.suspicious, duplicate_key = excluded.duplicate_key, expires_at = excluded.expires_at,
         reembedding = NULL, reembedding_norm = NULL
       RETURNING id, rec, agent_id, term_count)
     INSERT INTO ${tables.postings} (term_id, rec, impact, tf, term_count)
     SELECT p.term_id, w.rec, ${impact('p.tf', 'w.term_count', 'a.average')}, p.tf, w.term_count
     FROM unnest($20::int[], $21::bigint[], $22::int[]) AS p(n, term_id, tf)
     JOIN written w ON w.id = ($1::text[])[p.n]
     LEFT JOIN ${tables.agents} ag ON ag.agent_id = w.agent_id
     CROSS JOIN LATERAL (SELECT CASE WHEN ag.row_count > 0 THEN greatest(ag.term_total::float8 / ag.row_count, 1) END AS average) a`,
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
      postingRecord,
      postingTerm,
      postingTf,
      column((record) => record.provenance.writer),
      column((record) => record.provenance.jobId),
      column((record) => record.provenance.span?.start ?? null),
      column((record) => record.provenance.span?.end ?? null),
      column((record) => JSON.stringify(record.alsoFrom)),
      column((record) => record.validFrom),
      column((record) => record.validTo),
      column((record) => record.supersededBy),
      column((record) => record.suspicious),
      column((record) => duplicateKey(record)),
      column((record) => (record.expiresAt === null ? null : canonicalIso(record.expiresAt))),
    ],
  );
}

/** Deletes the postings of records (their `rec`s) being replaced or deleted. */
export async function deletePostings(sql: SqlClient, tables: IndexTables, recs: readonly (string | number)[]): Promise<void> {
  if (recs.length > 0) await sql.query(`DELETE FROM ${tables.postings} WHERE rec = ANY($1::bigint[])`, [recs.map(String)]);
}
