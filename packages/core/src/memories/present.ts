import type { MemoryHitRecord, MemorySourceRef } from '../ports/memory-index.js';
import type { MemoryMarkRecord } from '../ports/store/index.js';
import type { RetrievalContributions } from '../retrieval/retrieve.js';
import type { MemoryOutput, MemorySignalsOutput, MemorySourceOutput } from '../schemas/outputs.js';

/** A source reference as the memories API shows it (snake_case; a document's piece is its turn index). */
export function presentSource(source: MemorySourceRef): MemorySourceOutput {
  if (source.kind === 'document') {
    return {
      kind: 'document',
      thread_id: source.threadId,
      observation_id: source.observationId,
      turn_index: source.turnIndex,
      source_id: source.sourceId,
      filename: source.filename,
      page: source.page,
      piece: source.turnIndex,
    };
  }
  return { kind: 'turn', thread_id: source.threadId, observation_id: source.observationId, turn_index: source.turnIndex };
}

/** A memory record as `GET .../memories` and search show it, with its mark (issue 42) when it has one. */
export function presentMemory(record: MemoryHitRecord, mark?: MemoryMarkRecord | null): MemoryOutput {
  const forgotten = mark?.forgotten ?? null;
  const edited = mark?.edited ?? null;
  return {
    memory_id: record.id,
    agent_id: record.agentId,
    text: record.text,
    speaker: record.speaker,
    occurred_at: record.occurredAt,
    learned_at: record.createdAt,
    valid_from: record.validFrom,
    valid_to: record.validTo,
    superseded_by: record.supersededBy,
    suspicious: record.suspicious,
    source: presentSource(record.source),
    span: record.provenance.span,
    also_from: record.alsoFrom.map(presentSource),
    job_id: record.provenance.jobId,
    writer: record.provenance.writer,
    expires_at: record.expiresAt,
    pinned: mark?.pinned ?? false,
    forgotten: forgotten === null ? null : { at: forgotten.at, reason: forgotten.reason, by: forgotten.by, restore_until: forgotten.restoreUntil },
    edited: edited === null ? null : { at: edited.at, by: edited.by, from_memory_id: edited.fromMemoryId },
    category: mark?.category ?? null,
    policy_version: mark?.policyVersion ?? null,
    review_state: mark?.review?.state ?? null,
  };
}

/** Retrieval's contributions under the wire's signal names. */
export function presentSignals(contributions: RetrievalContributions | undefined): MemorySignalsOutput {
  const c = contributions ?? { lexical: 0, semantic: 0, speaker: 0, self: 0, time: 0, episode: 0, hyponyms: 0, suspicious: 0, decay: 0 };
  return { full_text: c.lexical, vector: c.semantic, speaker: c.speaker, self: c.self, time: c.time, episode: c.episode, hyponyms: c.hyponyms, suspicious: c.suspicious, decay: c.decay };
}
