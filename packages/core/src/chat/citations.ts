import { EDIT_WRITER, type MemoryHitRecord } from '../ports/memory-index.js';
import type { TurnRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { sourceLabel } from '../retrieval/retrieve.js';
import type { Citation } from '../schemas/outputs.js';

/**
 * The citation of a memory: documents cite their stored source (`src_`), conversation turns cite
 * the observation they came with (`obs_`). `verified` is true only when the memory's text is found
 * in the stored source it names.
 */
export async function citationOf(context: ServiceContext, record: MemoryHitRecord): Promise<Citation> {
  return (await citationsOf(context, [record]))[0]!;
}

/**
 * The citations of `records`, in order, as {@link citationOf} makes them. The source turns the
 * `verified` check reads are read in one store call (`turns.get`), whatever observations they
 * come from: each read is a store round trip.
 */
export async function citationsOf(context: ServiceContext, records: readonly MemoryHitRecord[]): Promise<Citation[]> {
  const turns = await sourceTurns(context, records);
  const citations: Citation[] = [];
  for (const record of records) citations.push(await citation(context, record, turns.get(turnKey(record.source.observationId, record.source.turnIndex)) ?? null));
  return citations;
}

const turnKey = (observationId: string, turnIndex: number) => `${observationId}#${turnIndex}`;

/** The turns the records were learned from, by observation and index (missing ones absent). */
async function sourceTurns(context: ServiceContext, records: readonly MemoryHitRecord[]): Promise<Map<string, TurnRecord>> {
  if (records.length === 0) return new Map();
  const refs = records.map(({ source }) => ({ jobId: source.observationId, turnIndex: source.turnIndex }));
  const found = new Map<string, TurnRecord>();
  for (const turn of await context.store.turns.get({ refs })) found.set(turnKey(turn.jobId, turn.turnIndex), turn);
  return found;
}

async function citation(context: ServiceContext, record: MemoryHitRecord, turn: TurnRecord | null): Promise<Citation> {
  const source = record.source;
  const date = record.occurredAt?.slice(0, 10);
  // A memory a person edited (issue 42) is cited as edited: its words are theirs, not the source's
  // (so it is not `verified` against the source either, unless the edit kept the source's words).
  const edited = record.provenance.writer === EDIT_WRITER ? ' (edited)' : '';
  if (source.kind === 'document') {
    return {
      source_id: source.sourceId,
      label: `${sourceLabel(record)}${edited}`,
      // The stored original's type; the citation's link serves it (GET /v1/agents/{agent_id}/sources/{source_id}).
      media_type: (await context.store.uploads.listBySource({ agentId: record.agentId, sourceId: source.sourceId }))[0]?.mediaType ?? 'application/octet-stream',
      verified: turnContains(turn, record),
      target: { kind: 'source', agent_id: record.agentId, source_id: source.sourceId, page: source.page },
    };
  }
  return {
    source_id: source.observationId,
    label: `${record.speaker ?? 'user'}${date ? `, ${date}` : ''} (turn ${source.turnIndex + 1})${edited}`,
    media_type: 'text/plain',
    verified: turnContains(turn, record),
    target: { kind: 'observation', agent_id: record.agentId, thread_id: source.threadId, observation_id: source.observationId, turn_index: source.turnIndex },
  };
}

function turnContains(turn: TurnRecord | null, record: MemoryHitRecord): boolean {
  if (!turn || turn.turnIndex !== record.source.turnIndex) return false;
  return normalize(turn.text).includes(normalize(record.text));
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();
