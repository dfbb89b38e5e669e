import type { MemoryRecord, MemorySourceRef } from './memory-index.js';

/**
 * Turns the turns of an observation job into memory records.
 *
 * Contract:
 * - `write` receives a batch of consecutive turns of one job and MUST return exactly one outcome per
 *   turn, in order: the memories that turn produced (possibly none), or a failure with a reason.
 * - Memories MUST cite the turn(s) they came from through `source`.
 * - It MUST NOT write to the index itself; the service embeds and commits what it returns.
 * - It MAY ask for similar existing memories through `searchSimilar` to reconcile (update/delete).
 */
export type MemoryWriter = {
  readonly specificationVersion: 'v1';
  readonly id: string;
  write(request: MemoryWriteRequest): Promise<MemoryWriteResult>;
};

export type WriterTurn = {
  /** 0-based index of the turn in its job. */
  turnIndex: number;
  speaker: string;
  text: string;
  /** ISO date-time of the observation the turn came with. */
  timestamp: string;
  tags: string[];
  source: MemorySourceRef;
};

export type MemoryDraft = {
  text: string;
  keywords: string;
  speaker: string | null;
  occurredAt: string | null;
  source: MemorySourceRef;
};

export type TurnOutcome =
  | { turnIndex: number; ok: true; memories: MemoryDraft[] }
  | { turnIndex: number; ok: false; reason: string; message: string };

export type MemoryWriteRequest = {
  agentId: string;
  turns: WriterTurn[];
  /** Similar memories already in the agent's index, for reconciliation. */
  searchSimilar(text: string, limit: number): Promise<MemoryRecord[]>;
  signal?: AbortSignal;
};

export type MemoryWriteResult = {
  outcomes: TurnOutcome[];
  /** Ids of existing memories the new facts supersede (deleted when the batch commits). */
  deleteIds?: string[];
};
