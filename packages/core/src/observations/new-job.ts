import type { Caller } from '../auth/caller.js';
import type { DocumentJobDetails, JobDetails, JobStatus, NewJobRecord, ThreadRecord, TurnDetails, TurnRecord } from '../ports/store/index.js';

/** A turn to learn, before it is stored. */
/** A turn to store; `expiresAt` (issue 42) when the observe body gave one. */
export type NewTurn = { speaker: string; text: string; timestamp: string; tags: string[]; details?: TurnDetails; expiresAt?: string };

/** A stored, not yet read turn of job `jobId` at `turnIndex`. */
export function toTurnRecord(jobId: string, turnIndex: number, turn: NewTurn): TurnRecord {
  return {
    jobId,
    turnIndex,
    speaker: turn.speaker,
    text: turn.text,
    timestamp: turn.timestamp,
    tags: turn.tags,
    state: 'pending',
    failureReason: null,
    details: turn.expiresAt === undefined ? (turn.details ?? {}) : { ...(turn.details ?? {}), expiresAt: turn.expiresAt },
  };
}

/** What {@link newJob} needs besides the turns: who sends them, where, and the job's kind and start. */
export type NewJobInput = {
  /** The `obs_` id. */
  id: string;
  now: string;
  caller: Caller;
  thread: ThreadRecord;
  /** @default 'queued' */
  status?: JobStatus;
  /** @default false */
  queued?: boolean;
} & NewJobDetails;

/** The kind of a new job and its details: a document job names its file; other kinds carry none. */
export type NewJobDetails = { kind: 'observe' | 'respond'; details?: undefined } | { kind: 'document'; details: DocumentJobDetails };

/**
 * A new job with its pending turns, as `store.jobs.insert` takes them: the one place a job record
 * is built (observations and document uploads both store theirs through it).
 */
export function newJob(input: NewJobInput, turns: readonly NewTurn[]): { job: NewJobRecord; turns: TurnRecord[] } {
  const records = turns.map((turn, turnIndex) => toTurnRecord(input.id, turnIndex, turn));
  return {
    job: {
      id: input.id,
      organizationId: input.caller.organizationId,
      agentId: input.thread.agentId,
      threadId: input.thread.id,
      endUserId: input.caller.endUserId,
      requestId: input.caller.requestId,
      ...kindAndDetails(input),
      status: input.status ?? 'queued',
      turnsTotal: records.length,
      turnsProcessed: 0,
      error: null,
      queued: input.queued ?? false,
      resumedAt: null,
      learning: null,
      createdAt: input.now,
      updatedAt: input.now,
    },
    turns: records,
  };
}

function kindAndDetails(input: NewJobDetails): JobDetails {
  return input.kind === 'document' ? { kind: 'document', details: input.details } : { kind: input.kind, details: {} };
}
