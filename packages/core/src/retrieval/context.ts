import type { MemoryHitRecord } from '../ports/memory-index.js';
import type { RetrievedItem } from './weights.js';

/** Drops later items whose text is the same as an earlier one (case and spacing aside). */
export function dedupeByText(items: RetrievedItem[]): RetrievedItem[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = item.record.text.toLowerCase().replace(/\s+/g, ' ').trim();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * How one item reads in `memory_context`: `[n] (date, speaker) text`; a superseded memory packed
 * as history adds `no longer current, replaced by [k]`.
 */
export function formatContextItem(number: number, record: MemoryHitRecord, replacedBy?: number): string {
  const cues = [record.occurredAt?.slice(0, 10), sourceLabel(record), replacedBy === undefined ? null : `no longer current, replaced by [${replacedBy}]`].filter(Boolean).join(', ');
  return `[${number}] (${cues}) ${record.text}`;
}

/** A person-readable label of where a memory came from. */
export function sourceLabel(record: MemoryHitRecord): string {
  const source = record.source;
  if (source.kind === 'document') return source.page === null ? source.filename : `${source.filename}, page ${source.page}`;
  return record.speaker ?? 'user';
}

/**
 * Packs items in rank order while they fit. `memory_context` never exceeds `maxChars`; when even
 * the best item alone is longer, its text is cut to fit (it stays a verbatim prefix of the source).
 */
export function pack(ranked: RetrievedItem[], maxChars: number): { packed: RetrievedItem[]; memoryContext: string } {
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
