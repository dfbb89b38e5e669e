import { compareMemoryHits, type MemoryHit } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { filterPredicate, filterSql, type SearchFilter } from './filters.js';
import { HIT_COLUMNS, hitColumns, hitFromRow, type HitRow, type IndexState } from './schema.js';
import { CachedAgentVectors, norm, vectorFromBytes, vectorFromSend, vectorLiteral } from './vectors.js';

export type VectorChannelOptions = {
  /** Rows of the JS channel's vector cache, in all agents (0: none). */
  vectorCacheRows: number;
  /** Agents with fewer rows are searched exactly even when the HNSW index exists. */
  exactSearchBelow: number;
  /** `hnsw.ef_search` of an HNSW search (raised to the rows fetched when that is more). */
  efSearch: number;
  /** Exact cosine in this process over the agent's cached vectors, also with pgvector (PGlite's default). */
  inProcess: boolean;
};

/** The agent's size and the table's, as read by the search that needs them. */
export type AgentSize = { agentRows: number; tableRows: number };

/**
 * The semantic channel: pgvector cosine in SQL (exact, or HNSW with iterative index scans for a
 * large agent), or exact cosine in JS over the agent's cached vectors: without pgvector, and with
 * it when `inProcess` (PGlite: its pgvector runs in WebAssembly, ~10x slower than JS here).
 */
export function vectorChannel(state: IndexState, options: VectorChannelOptions) {
  const { client } = state;
  const { records, agents } = state.tables;
  const vectorCache = new Map<string, CachedAgentVectors>();
  let cacheClock = 0;

  function evictFor(rows: number): void {
    let total = rows;
    for (const cached of vectorCache.values()) total += cached.size;
    const byAge = [...vectorCache.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [agentId, cached] of byAge) {
      if (total <= options.vectorCacheRows) break;
      vectorCache.delete(agentId);
      total -= cached.size;
    }
  }

  /** The agent's vectors at its current version: from the cache, or loaded (and cached if they fit). */
  async function agentVectors(agentId: string, dimensions: number): Promise<CachedAgentVectors> {
    // Version first, vectors second: vectors at least as new as the version label can only cause
    // an extra reload later, never a stale hit.
    const { rows: versionRows } = await client.query<{ version: string | number }>(`SELECT version FROM ${agents} WHERE agent_id = $1`, [agentId]);
    const version = String(versionRows[0]?.version ?? '0');
    const cached = vectorCache.get(agentId);
    if (cached && cached.version === version && cached.dimensions === dimensions) {
      cached.lastUsed = ++cacheClock;
      return cached;
    }
    vectorCache.delete(agentId);
    // pgvector: its binary form (vector_send); PGlite decodes bytea results slowly (2-3 s for
    // 9,000 vectors here) and parsing their text costs ~0.6 s, so it sends the bytes as hex text.
    const encoding = state.vectorKind === 'bytea' ? 'bytes' : client.dialect === 'pglite' ? 'hex' : 'send';
    const select = encoding === 'bytes' ? 'embedding' : encoding === 'hex' ? "encode(vector_send(embedding), 'hex')" : 'vector_send(embedding)';
    const { rows } = await client.query<{
      id: string;
      embedding: Uint8Array | string;
      embedding_norm: number;
      thread_id: string;
      valid_from: string | null;
      valid_to: string | null;
      expires_at: string | null;
    }>(`SELECT id, ${select} AS embedding, embedding_norm, thread_id, valid_from, valid_to, expires_at FROM ${records} WHERE agent_id = $1`, [agentId]);
    const decode = (value: Uint8Array | string) =>
      typeof value === 'string' ? vectorFromSend(Buffer.from(value, 'hex')) : encoding === 'send' ? vectorFromSend(value) : vectorFromBytes(value);
    const loaded = new CachedAgentVectors(dimensions, version, rows.length);
    for (const row of rows) {
      loaded.set(row.id, decode(row.embedding), Number(row.embedding_norm), { threadId: row.thread_id, validFrom: row.valid_from, validTo: row.valid_to, expiresAt: row.expires_at });
    }
    loaded.lastUsed = ++cacheClock;
    if (rows.length <= options.vectorCacheRows) {
      evictFor(rows.length);
      vectorCache.set(agentId, loaded);
    }
    return loaded;
  }

  /**
   * Without pgvector: exact cosine in JS over the agent's vectors (bytea, cached per agent and
   * version), ties by id; then load the winning records.
   */
  async function searchInJs(agentId: string, vector: Float32Array, queryNorm: number, limit: number, filter: SearchFilter): Promise<MemoryHit[]> {
    const vectors = await agentVectors(agentId, vector.length);
    const top = vectors.top(vector, queryNorm, limit, filterPredicate(filter));
    if (top.length === 0) return [];
    const { rows: full } = await client.query<HitRow>(`SELECT ${HIT_COLUMNS} FROM ${records} WHERE agent_id = $1 AND id = ANY($2::text[])`, [
      agentId,
      top.map((hit) => hit.id),
    ]);
    const byId = new Map(full.map((row) => [row.id, hitFromRow(row)]));
    return top.flatMap((hit) => {
      const record = byId.get(hit.id);
      return record ? [{ record, score: hit.score }] : [];
    });
  }

  /**
   * pgvector: order by distance alone so an HNSW index can serve it, then settle ties in JS,
   * fetching more while the tie at the cut may continue past what was fetched.
   */
  async function searchInSql(agentId: string, vector: Float32Array, queryNorm: number, limit: number, size: AgentSize, filter: SearchFilter): Promise<MemoryHit[]> {
    const dimensions = vector.length;
    const literal = vectorLiteral(vector, 'pgvector');
    // HNSW pays off for a large agent only: a small one is read whole through the agent index.
    const approximate = state.hasAnnIndex && size.agentRows >= options.exactSearchBelow;
    let count = approximate ? limit + 8 : limit * 2 + 8;
    for (;;) {
      const fetchCount = count;
      const run = approximate ? <T>(fn: (sql: SqlClient) => Promise<T>) => client.transaction(fn) : <T>(fn: (sql: SqlClient) => Promise<T>) => fn(client);
      const rows = await run(async (tx) => {
        if (approximate) {
          // pgvector >= 0.8 iterative index scans: the graph is walked further until `fetchCount`
          // rows pass the agent filter. relaxed_order is the fast mode (results slightly out of
          // order, sorted again below); max_scan_tuples is raised for a small share of the table
          // so a filtered search still finds its k rows (about fetchCount / share are visited).
          const share = Math.max(1e-6, Math.min(1, size.agentRows / Math.max(1, size.tableRows)));
          const maxScanTuples = Math.min(2_000_000, Math.max(20_000, Math.ceil((fetchCount / share) * 4)));
          await tx.query(
            `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true),
               set_config('hnsw.max_scan_tuples', $2, true)`,
            [String(Math.min(1000, Math.max(options.efSearch, fetchCount))), String(maxScanTuples)],
          );
        }
        // The HNSW index is on the expression `embedding::vector(d)`; without the cast the planner
        // cannot use it, which is how an exact search is asked for.
        const distance = approximate ? `embedding::vector(${dimensions}) <=> $2::vector(${dimensions})` : 'embedding <=> $2::vector';
        const params: unknown[] = [agentId, literal, fetchCount];
        const kept = filterSql(state.tables, filter, '', params);
        const result = await tx.query<HitRow & { distance: number | null }>(
          // Rank on (id, distance) first: converting every candidate's vector to text before the
          // sort would cost more than the distances themselves. MATERIALIZED keeps the LIMIT on
          // the index scan (relaxed order), the outer ORDER BY restores the order.
          `WITH nearest AS MATERIALIZED (SELECT id, ${distance} AS distance FROM ${records} WHERE agent_id = $1 AND ${kept} ORDER BY ${distance} LIMIT $3)
           SELECT ${hitColumns('r.')}, nearest.distance FROM nearest JOIN ${records} r ON r.id = nearest.id ORDER BY nearest.distance`,
          params,
        );
        return result.rows;
      });
      const hits = rows
        .map((row) => {
          const record = hitFromRow(row);
          const rowNorm = Number(row.embedding_norm);
          // Zero vectors have no direction: pgvector gives NaN, the port says similarity 0.
          const score = row.distance === null || Number.isNaN(Number(row.distance)) || rowNorm === 0 || queryNorm === 0 ? 0 : 1 - Number(row.distance);
          return { record, score };
        })
        .sort(compareMemoryHits);
      if (hits.length < fetchCount || hits.length <= limit) return hits.slice(0, limit);
      if (hits[hits.length - 1]!.score < hits[limit - 1]!.score - 1e-6) return hits.slice(0, limit);
      count *= 4;
    }
  }

  return {
    async search(agentId: string, vector: Float32Array, limit: number, size: () => Promise<AgentSize>, filter: SearchFilter): Promise<MemoryHit[]> {
      const dimensions = state.fingerprint?.dimensions ?? vector.length;
      if (vector.length !== dimensions) throw new RangeError(`query vector has ${vector.length} dimensions, the index ${dimensions}`);
      const queryNorm = norm(vector);
      if (state.vectorKind === 'bytea' || options.inProcess) return searchInJs(agentId, vector, queryNorm, limit, filter);
      return searchInSql(agentId, vector, queryNorm, limit, state.hasAnnIndex ? await size() : { agentRows: 0, tableRows: 0 }, filter);
    },

    /**
     * After this process's write committed: when the cache held exactly the version before it, the
     * write is applied in place (writers of an agent are serialized, so that is the new state);
     * otherwise the agent's cache is dropped and reloaded on its next search.
     */
    afterWrite(versions: Map<string, string>, apply: (agentId: string, cached: CachedAgentVectors) => void): void {
      for (const [agentId, version] of versions) {
        const cached = vectorCache.get(agentId);
        if (!cached) continue;
        if (BigInt(cached.version) + 1n === BigInt(version)) {
          apply(agentId, cached);
          cached.version = version;
        } else {
          vectorCache.delete(agentId);
        }
      }
    },

    forget(agentId: string): void {
      vectorCache.delete(agentId);
    },

    /** Drops every cached agent (the vectors changed generation: issue 39, re-embedding). */
    forgetAll(): void {
      vectorCache.clear();
    },
  };
}

export type VectorChannel = ReturnType<typeof vectorChannel>;
