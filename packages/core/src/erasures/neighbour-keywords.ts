import { NEIGHBOUR_MAX_CHARS, NEIGHBOUR_TURNS } from '../memory/default-memory-writer.js';
import type { MemoryHitRecord } from '../ports/memory-index.js';
import type { ServiceContext } from '../service/context.js';

/** Page size of the index list this step makes. */
const PAGE = 1000;

/**
 * A deleted memory's words leave its neighbours' keywords (issue 41). The default writer indexes
 * each turn with the words of up to {@link NEIGHBOUR_TURNS} turns on each side of the same job
 * (full-text only), so a memory's text is copied into the keywords of the memories of the nearby
 * turns. When it is deleted, each of those neighbours (same observation job, another turn at most
 * that far away) gets its keywords rewritten without that copy (`MemoryIndex.rewriteKeywords`),
 * so a search for a word only the deleted memory said finds nothing. Whole threads, jobs and
 * sources need none of this: their neighbours go with them.
 */
export async function scrubNeighbourKeywords(context: ServiceContext, agentId: string, deleted: readonly MemoryHitRecord[]): Promise<number> {
  const rewritten = new Map<string, string>();
  const gone = new Set(deleted.map((record) => record.id));
  const jobs = new Map<string, MemoryHitRecord[]>();
  for (const erased of deleted) {
    const jobId = erased.source.observationId;
    let records = jobs.get(jobId);
    if (!records) jobs.set(jobId, (records = await jobMemories(context, agentId, jobId)));
    for (const neighbour of records) {
      const distance = Math.abs(neighbour.source.turnIndex - erased.source.turnIndex);
      // A turn's own pieces never hold each other's words (neighbours are other turns).
      if (gone.has(neighbour.id) || distance === 0 || distance > NEIGHBOUR_TURNS) continue;
      const before = rewritten.get(neighbour.id) ?? neighbour.keywords;
      const after = withoutCopy(before, erased);
      if (after !== before) rewritten.set(neighbour.id, after);
    }
  }
  if (rewritten.size === 0) return 0;
  await context.index.rewriteKeywords({ agentId, records: [...rewritten].map(([id, keywords]) => ({ id, keywords })) });
  return rewritten.size;
}

async function jobMemories(context: ServiceContext, agentId: string, observationId: string): Promise<MemoryHitRecord[]> {
  const found: MemoryHitRecord[] = [];
  let cursor: string | null = null;
  do {
    const page = await context.index.list({ agentId, observationId, includeHistory: true, limit: PAGE, cursor });
    found.push(...page.records);
    cursor = page.nextCursor;
  } while (cursor);
  return found;
}

const WORD = /[\p{L}\p{N}]/u;

/**
 * `keywords` without the last copy of the erased memory's text (a whole-word match). When the
 * writer cut the copy short (the neighbour's words are indexed up to {@link NEIGHBOUR_MAX_CHARS}
 * of its turn, and the memory's span says where in the turn it starts), the part that fits is
 * removed instead. Anything else is left as it is: a writer that copies no neighbours' words
 * (an LLM writer's facts) has nothing to remove.
 */
export function withoutCopy(keywords: string, erased: Pick<MemoryHitRecord, 'text' | 'provenance'>): string {
  const text = erased.text.trim();
  if (text === '') return keywords;
  const whole = lastBounded(keywords, text, false);
  if (whole !== -1) return splice(keywords, whole, text.length);
  const start = erased.provenance.span?.start;
  if (start === undefined || start >= NEIGHBOUR_MAX_CHARS || start + text.length <= NEIGHBOUR_MAX_CHARS) return keywords;
  const fitted = text.slice(0, NEIGHBOUR_MAX_CHARS - start);
  const cut = lastBounded(keywords, fitted, true);
  return cut === -1 ? keywords : splice(keywords, cut, fitted.length);
}

/** Last index of `part` in `text` not inside a word (a cut copy ends where the text goes on with a space). */
function lastBounded(text: string, part: string, cut: boolean): number {
  for (let at = text.lastIndexOf(part); at !== -1; at = at === 0 ? -1 : text.lastIndexOf(part, at - 1)) {
    const before = at === 0 ? '' : text[at - 1]!;
    const after = text[at + part.length] ?? '';
    const startsClean = before === '' || !WORD.test(before) || !WORD.test(part[0]!);
    const endsClean = cut ? after === '' || after === ' ' : after === '' || !WORD.test(after) || !WORD.test(part[part.length - 1]!);
    if (startsClean && endsClean) return at;
  }
  return -1;
}

function splice(text: string, at: number, length: number): string {
  const before = text.slice(0, at).trimEnd();
  const after = text.slice(at + length).trimStart();
  return before === '' ? after : after === '' ? before : `${before} ${after}`;
}
