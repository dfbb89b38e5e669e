import type { MemoryRecord } from '../ports/memory-index.js';
import type { ServiceContext } from '../service/context.js';
import { sourceLabel } from '../retrieval/retrieve.js';

export type CitationBody = { source_id: string; label: string; media_type: string; href: string; verified: boolean };

/**
 * The citation of a memory: documents cite their stored source (`src_`), conversation turns cite
 * the observation they came with (`obs_`). `verified` is true only when the memory's text is found
 * in the stored source it names.
 */
export async function citationOf(context: ServiceContext, record: MemoryRecord): Promise<CitationBody> {
  const source = record.source;
  const date = record.occurredAt?.slice(0, 10);
  if (source.kind === 'document') {
    return {
      source_id: source.sourceId,
      label: sourceLabel(record),
      // The stored original's type; `href` serves it (GET /v1/agents/{agent_id}/sources/{source_id}).
      media_type: (await context.store.documents.listBySource({ agentId: record.agentId, sourceId: source.sourceId }))[0]?.mediaType ?? 'application/octet-stream',
      href: `/v1/agents/${record.agentId}/sources/${source.sourceId}`,
      verified: await turnContains(context, record),
    };
  }
  return {
    source_id: source.observationId,
    label: `${record.speaker ?? 'user'}${date ? `, ${date}` : ''} (turn ${source.turnIndex + 1})`,
    media_type: 'text/plain',
    href: `/v1/agents/${record.agentId}/threads/${source.threadId}/observe/${source.observationId}/status`,
    verified: await turnContains(context, record),
  };
}

async function turnContains(context: ServiceContext, record: MemoryRecord): Promise<boolean> {
  const [turn] = await context.store.jobs.listTurns({ jobId: record.source.observationId, fromIndex: record.source.turnIndex, limit: 1 });
  if (!turn || turn.turnIndex !== record.source.turnIndex) return false;
  return normalize(turn.text).includes(normalize(record.text));
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();
