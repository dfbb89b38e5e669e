import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type MemoryIndex } from '@memory-agents/core';
import {
  analyze,
  applyMemoryPatch,
  assertEmbedderMatches,
  assertReembedWrite,
  assertVectorDimensions,
  cloneMemoryRecord,
  compareMemoryHits,
  copiedRecord,
  cosineSimilarity,
  dedupeRecordsById,
  duplicateKey,
  hitRecord,
  indexedText,
  listPage,
  matchesDeleteFilter,
  matchesSearchFilter,
  memoryRecordDefaults,
  mergePatches,
  sameFingerprint,
  type EmbedderFingerprint,
  type MemoryHit,
  type MemoryRecord,
  type MemorySearchRequest,
} from '@memory-agents/core/adapter';

/** Options of {@link jsonFileMemoryIndex}. */
export type JsonFileMemoryIndexOptions = {
  /** The JSON file that holds every record; created on the first write. */
  file: string;
};

/** The file's shape: vectors as plain number arrays (a float32 survives the JSON round trip exactly). */
type Stored = {
  embedder: EmbedderFingerprint | null;
  records: (Omit<MemoryRecord, 'vector'> & { vector: number[] })[];
  /** A re-embed in progress: its target and the vectors written so far, by record id. */
  reembed?: { target: EmbedderFingerprint; vectors: Record<string, number[]> };
};

/** BM25 parameters (the classic defaults, as core's in-memory index uses). */
const K1 = 1.2;
const B = 0.75;

/** A record with its analyzed full-text terms, computed once when it is loaded or written. */
type Entry = { record: MemoryRecord; terms: string[] };

/**
 * A `MemoryIndex` on one JSON file: every record is kept in process memory and the whole file is
 * rewritten (to a temporary file, then renamed over the old one) after each change. Search scans
 * the agent's records: BM25 over core's `analyze` for the lexical channel, exact cosine for the
 * semantic one. Fine for a few thousand memories and one process; it shows the port, not a database.
 *
 * @example
 * const service = createMemoryService({ store: inMemoryStore(), index: jsonFileMemoryIndex({ file: './memories.json' }) });
 */
export function jsonFileMemoryIndex(options: JsonFileMemoryIndexOptions): MemoryIndex {
  const entries = new Map<string, Entry>();
  let fingerprint: EmbedderFingerprint | null = null;
  /** The re-embed in progress and its target vectors (only for stored ids). */
  let target: EmbedderFingerprint | null = null;
  const targetVectors = new Map<string, Float32Array>();
  let opened: Promise<void> | null = null;
  let writing: Promise<void> = Promise.resolve();

  const put = (record: MemoryRecord) => {
    // A record written anew needs its target vector again (its text may have changed).
    targetVectors.delete(record.id);
    entries.set(record.id, { record: cloneMemoryRecord(record), terms: analyze(indexedText(record)) });
  };
  const recordsOf = (agentId: string) => [...entries.values()].filter((entry) => entry.record.agentId === agentId);
  /** What a search considers: the agent's records valid at `asOf` (current when absent), in `threadIds` when given. */
  const searchable = (request: MemorySearchRequest) => recordsOf(request.agentId).filter((entry) => matchesSearchFilter(entry.record, request));

  /** Changes apply to memory at once (so they are atomic to readers) and reach the file in order. */
  function persist(): Promise<void> {
    const stored: Stored = { embedder: fingerprint, records: [...entries.values()].map(({ record }) => ({ ...record, vector: Array.from(record.vector) })) };
    if (target) stored.reembed = { target, vectors: Object.fromEntries([...targetVectors].map(([id, vector]) => [id, Array.from(vector)])) };
    const text = JSON.stringify(stored);
    writing = writing.then(async () => {
      await mkdir(dirname(options.file), { recursive: true });
      const temporary = `${options.file}.${randomUUID()}.tmp`;
      await writeFile(temporary, text);
      await rename(temporary, options.file);
    });
    return writing;
  }

  async function load(): Promise<void> {
    const text = await readFile(options.file, 'utf8').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
    if (text === null) return;
    const stored = JSON.parse(text) as Stored;
    fingerprint = stored.embedder;
    // A file written before the v2 fields (provenance, validity, flags) reads back with their defaults.
    for (const record of stored.records) put({ ...memoryRecordDefaults(record), ...record, vector: Float32Array.from(record.vector) });
    target = stored.reembed?.target ?? null;
    for (const [id, vector] of Object.entries(stored.reembed?.vectors ?? {})) targetVectors.set(id, Float32Array.from(vector));
  }

  function lexical(request: MemorySearchRequest, limit: number): MemoryHit[] {
    const query = new Set(analyze(request.text));
    const documents = searchable(request);
    if (query.size === 0 || documents.length === 0) return [];
    const averageLength = documents.reduce((sum, entry) => sum + entry.terms.length, 0) / documents.length || 1;
    const documentFrequency = new Map<string, number>();
    for (const entry of documents) for (const term of new Set(entry.terms)) if (query.has(term)) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    const hits: Scored[] = [];
    for (const entry of documents) {
      let score = 0;
      for (const term of query) {
        const frequency = entry.terms.filter((candidate) => candidate === term).length;
        if (frequency === 0) continue;
        const df = documentFrequency.get(term)!;
        const idf = Math.log(1 + (documents.length - df + 0.5) / (df + 0.5));
        score += (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * entry.terms.length) / averageLength));
      }
      if (score > 0) hits.push({ record: entry.record, score });
    }
    return top(hits, limit);
  }

  function semantic(request: MemorySearchRequest, vector: Float32Array, limit: number): MemoryHit[] {
    return top(
      searchable(request).map((entry) => ({ record: entry.record, score: cosineSimilarity(vector, entry.record.vector) })),
      limit,
    );
  }

  return {
    specificationVersion: 'v1',
    id: 'json-file',
    capabilities: { approximateVectors: false, persistent: true },

    init: () => (opened ??= load()),
    close: () => writing,

    async upsert({ records, embedder }) {
      assertEmbedderMatches(fingerprint, embedder);
      if (records.length === 0) return;
      assertVectorDimensions(records, embedder.dimensions); // before any change: a bad record writes nothing
      fingerprint ??= { ...embedder };
      for (const record of dedupeRecordsById(records)) put(record);
      await persist();
    },

    async search(request) {
      const size = Math.max(0, Math.floor(request.limit));
      return {
        lexical: size === 0 || request.text.trim() === '' ? [] : lexical(request, size),
        semantic: size === 0 || request.vector === null ? [] : semantic(request, request.vector, size),
      };
    },

    async list(request) {
      const page = listPage(recordsOf(request.agentId).map((entry) => entry.record), request);
      return { ...page, records: page.records.map((record) => hitRecord(record as MemoryRecord)) };
    },

    async update({ agentId, patches }) {
      let changed = false;
      for (const patch of mergePatches(patches)) {
        const entry = entries.get(patch.id);
        if (!entry || entry.record.agentId !== agentId) continue;
        entry.record = applyMemoryPatch(entry.record, patch);
        changed = true;
      }
      if (changed) await persist();
    },

    // A deleted memory's words leave its neighbours' keywords (issue 41): the terms follow.
    async rewriteKeywords({ agentId, records }) {
      let changed = false;
      for (const { id, keywords } of records) {
        const entry = entries.get(id);
        if (!entry || entry.record.agentId !== agentId) continue;
        entry.record = { ...entry.record, keywords };
        entry.terms = analyze(indexedText(entry.record));
        changed = true;
      }
      if (changed) await persist();
    },

    async get({ agentId, ids }) {
      return [...new Set(ids)].flatMap((id) => {
        const entry = entries.get(id);
        return entry && entry.record.agentId === agentId ? [cloneMemoryRecord(entry.record)] : [];
      });
    },

    // Optional (issue 33): the agent's current records whose duplicate key is one of `keys`, so
    // learning merges a restated turn instead of storing it twice. A scan is fine at this size; a
    // larger index stores the key with each record and looks it up (see core's in-memory index).
    async findDuplicates({ agentId, keys }) {
      const wanted = new Set(keys);
      if (wanted.size === 0) return [];
      return recordsOf(agentId)
        .map((entry) => entry.record)
        .filter((record) => record.validTo === null && wanted.has(duplicateKey(record) ?? ''))
        .map((record) => hitRecord(record));
    },

    async deleteBy(filter) {
      const doomed = recordsOf(filter.agentId).filter((entry) => matchesDeleteFilter(entry.record, filter));
      if (doomed.length === 0) return;
      for (const entry of doomed) {
        entries.delete(entry.record.id);
        targetVectors.delete(entry.record.id);
      }
      await persist();
    },

    async copyAgent({ fromAgentId, toAgentId, toOrganizationId, newId }) {
      // Snapshot first: copying an agent onto itself must not copy its own copies.
      const originals = recordsOf(fromAgentId).map((entry) => entry.record);
      // supersededBy follows its target to the copy.
      const newIds = new Map(originals.map((record) => [record.id, newId()]));
      for (const record of originals) put({ ...copiedRecord(record, newIds), agentId: toAgentId, organizationId: toOrganizationId });
      if (originals.length > 0) await persist();
      return { copied: originals.length };
    },

    async stats({ agentId }) {
      return { count: recordsOf(agentId).length };
    },

    async embedder() {
      return fingerprint ? { ...fingerprint } : null;
    },

    // Re-embedding (issue 39): target vectors kept beside the records until every record has one,
    // then swapped in at once.
    async beginReembed({ target: next }) {
      if (fingerprint === null || sameFingerprint(target, next)) return;
      targetVectors.clear();
      target = sameFingerprint(fingerprint, next) ? null : { ...next };
      await persist();
    },

    async reembedProgress() {
      return fingerprint && target ? { from: { ...fingerprint }, to: { ...target }, done: targetVectors.size, total: entries.size } : null;
    },

    async reembedPending({ limit, after }) {
      if (!target) return [];
      return [...entries.keys()]
        .filter((id) => !targetVectors.has(id) && (after == null || id > after))
        .sort()
        .slice(0, Math.max(0, limit))
        .map((id) => ({ id, agentId: entries.get(id)!.record.agentId, text: entries.get(id)!.record.text }));
    },

    async writeReembedded({ target: given, vectors }) {
      assertReembedWrite(fingerprint, target, given, vectors);
      for (const { id, vector } of vectors) if (entries.has(id)) targetVectors.set(id, new Float32Array(vector));
      await persist();
    },

    async finishReembed({ target: given }) {
      if (!target || !sameFingerprint(target, given) || targetVectors.size !== entries.size) return false;
      for (const entry of entries.values()) entry.record = { ...entry.record, vector: targetVectors.get(entry.record.id)! };
      fingerprint = target;
      target = null;
      targetVectors.clear();
      await persist();
      return true;
    },
  };
}

/** A stored record with its score for one query. */
type Scored = { record: MemoryRecord; score: number };

/** The best `limit` hits in the port's order (score descending, ties by id), as hits carry them: copies without the vector. */
function top(hits: Scored[], limit: number): MemoryHit[] {
  return hits
    .sort(compareMemoryHits)
    .slice(0, limit)
    .map((hit) => ({ record: hitRecord(hit.record), score: hit.score }));
}
