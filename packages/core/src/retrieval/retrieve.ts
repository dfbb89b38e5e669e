import type { Embedder } from '../ports/embedder.js';
import type { MemoryIndex, MemoryRecord } from '../ports/memory-index.js';

/** `max_context_chars` when a request gives none. */
export const DEFAULT_MAX_CONTEXT_CHARS = 4_000;
/** Candidates taken from each channel before fusion. */
export const CANDIDATES_PER_CHANNEL = 50;
/** Reciprocal rank fusion constant (Cormack et al.). */
const RRF_K = 60;

export type RetrievedItem = { record: MemoryRecord; score: number };

export type RetrievalResult = {
  /** Every fused candidate, best first, deduplicated. */
  ranked: RetrievedItem[];
  /** The prefix of `ranked` packed into `memoryContext`, each numbered from 1. */
  packed: RetrievedItem[];
  memoryContext: string;
};

export type RetrieveRequest = {
  agentId: string;
  query: string;
  maxContextChars: number;
  /** Candidates per channel. @default CANDIDATES_PER_CHANNEL */
  limit?: number;
};

/**
 * Hybrid retrieval: full-text and vector candidates from the agent's index, fused by reciprocal
 * rank, deduplicated, and packed into `memory_context` under `maxContextChars`. Every packed item
 * keeps its record, and so its citation.
 */
export async function retrieve(index: MemoryIndex, embedder: Embedder, request: RetrieveRequest): Promise<RetrievalResult> {
  const limit = request.limit ?? CANDIDATES_PER_CHANNEL;
  const [vector] = (await embedder.embed({ texts: [request.query] })).vectors;
  const { lexical, semantic } = await index.search({ agentId: request.agentId, text: request.query, vector: vector ?? null, limit });
  const fused = new Map<string, RetrievedItem>();
  const add = (hits: { record: MemoryRecord }[]) =>
    hits.forEach((hit, rank) => {
      const entry = fused.get(hit.record.id) ?? { record: hit.record, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(hit.record.id, entry);
    });
  add(lexical);
  add(semantic);
  const ranked = dedupeByText([...fused.values()].sort((a, b) => b.score - a.score || (a.record.id < b.record.id ? -1 : 1)));
  const { packed, memoryContext } = pack(ranked, request.maxContextChars);
  return { ranked, packed, memoryContext };
}

/** Drops later items whose text is the same as an earlier one (case and spacing aside). */
function dedupeByText(items: RetrievedItem[]): RetrievedItem[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = item.record.text.toLowerCase().replace(/\s+/g, ' ').trim();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** How one item reads in `memory_context`: `[n] (date, speaker) text`. */
export function formatContextItem(number: number, record: MemoryRecord): string {
  const cues = [record.occurredAt?.slice(0, 10), sourceLabel(record)].filter(Boolean).join(', ');
  return `[${number}] (${cues}) ${record.text}`;
}

/** A person-readable label of where a memory came from. */
export function sourceLabel(record: MemoryRecord): string {
  const source = record.source;
  if (source.kind === 'document') return source.page === null ? source.filename : `${source.filename}, page ${source.page}`;
  return record.speaker ?? 'user';
}

/**
 * Packs items in rank order while they fit. `memory_context` never exceeds `maxChars`; when even
 * the best item alone is longer, its text is cut to fit (it stays a verbatim prefix of the source).
 */
function pack(ranked: RetrievedItem[], maxChars: number): { packed: RetrievedItem[]; memoryContext: string } {
  const packed: RetrievedItem[] = [];
  const lines: string[] = [];
  let used = 0;
  for (const item of ranked) {
    const line = formatContextItem(packed.length + 1, item.record);
    const cost = (lines.length > 0 ? 1 : 0) + line.length;
    if (used + cost <= maxChars) {
      lines.push(line);
      packed.push(item);
      used += cost;
      continue;
    }
    if (packed.length === 0) {
      const overhead = line.length - item.record.text.length;
      const room = maxChars - overhead - 1;
      if (room > 20) {
        const text = `${item.record.text.slice(0, room).trimEnd()}…`;
        const record = { ...item.record, text: text.slice(0, -1) };
        lines.push(formatContextItem(1, { ...record, text }));
        packed.push({ ...item, record });
      }
    }
    break;
  }
  return { packed, memoryContext: lines.join('\n') };
}
