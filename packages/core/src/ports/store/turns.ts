import type { LearningReason } from './not-learned.js';
import { isRecord } from './jobs.js';

/**
 * Store area `turns`: the turns of observation jobs (a job and its turns are inserted together by
 * `jobs.insert`, and more appended by `jobs.appendTurns`; erasure removes them with the job).
 * Part of the {@link Store} port (see `index.ts` for the general contract).
 */

/**
 * Where a turn of a job stands: `pending` until learned; `read` once its input words were charged
 * (billing on: a resumed job never charges it again; with billing off a turn goes from `pending`
 * straight to a final state); `committed` (learned) and `failed` are final.
 */
export type TurnState = 'pending' | 'read' | 'committed' | 'failed';

/** Where a piece of a document comes from (the details of a document job's turn). */
export type DocumentTurnDetails = {
  sourceId: string;
  /** Null only in turns stored before the filename was kept per turn. */
  filename: string | null;
  /** 1-based page the piece starts on, or null when the format has no pages. */
  page: number | null;
  pageEnd: number | null;
  /** 0-based index of the piece in the whole document; null in turns stored before it was kept. */
  piece: number | null;
};

/**
 * The details of a turn: a document piece's origin, or none (`{}`) for a turn that was said; and
 * when the observe body said so, when its memories expire (issue 42).
 */
export type TurnDetails = (DocumentTurnDetails | { [K in keyof DocumentTurnDetails]?: undefined }) & {
  expiresAt?: string;
  /** The extraction policy rule that kept the writer from this turn (issue 44), as a sentence. */
  excludedBy?: string;
};

export type TurnRecord = {
  jobId: string;
  /** 0-based position in the job. */
  turnIndex: number;
  speaker: string;
  text: string;
  /** ISO date-time of the observation. */
  timestamp: string;
  tags: string[];
  state: TurnState;
  /** Learning reason when `failed`. */
  failureReason: LearningReason | null;
  /** Where a document turn comes from in its file; no fields for other turns. */
  details: TurnDetails;
};

export type TurnStore = {
  /** Turns of a job in order, from `fromIndex`, at most `limit`. */
  list(request: { jobId: string; fromIndex: number; limit: number }): Promise<TurnRecord[]>;
  /**
   * The turns named by `refs` (job id and turn index), read in one call: resolves those that exist,
   * each once (a ref named twice yields one turn), ordered by job id then turn index; refs naming
   * no turn are left out. Used where many jobs' turns are needed at once (a chat answer's citations).
   */
  get(request: { refs: readonly { jobId: string; turnIndex: number }[] }): Promise<TurnRecord[]>;
  /** Sets the state (and failure reason) of the given turns; the job's `turnsProcessed` is recomputed. */
  setStates(request: { jobId: string; turnIndexes: number[]; state: TurnState; failureReason?: LearningReason | null }): Promise<void>;
  /** Counts of the job's turns per state. */
  counts(request: { jobId: string }): Promise<Record<TurnState, number>>;
  /** Turns of the agent's jobs in state `committed` (what the agent has learned). */
  countCommitted(request: { agentId: string }): Promise<number>;
};

const numberOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** The typed details of a turn from what a store kept (see {@link readJobDetails}). */
export function readTurnDetails(raw: unknown): TurnDetails {
  const expiry = {
    ...(isRecord(raw) && typeof raw.expiresAt === 'string' ? { expiresAt: raw.expiresAt } : {}),
    ...(isRecord(raw) && typeof raw.excludedBy === 'string' ? { excludedBy: raw.excludedBy } : {}),
  };
  if (!isRecord(raw) || typeof raw.sourceId !== 'string') return expiry;
  return {
    ...expiry,
    sourceId: raw.sourceId,
    filename: typeof raw.filename === 'string' ? raw.filename : null,
    page: numberOrNull(raw.page),
    pageEnd: numberOrNull(raw.pageEnd),
    piece: numberOrNull(raw.piece),
  };
}
