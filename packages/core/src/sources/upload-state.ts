import { type UploadRecord, FINAL_JOB_STATUSES, type JobRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';

/** Spec "Document state (per agent)". */
export type DocumentState = 'ingesting' | 'partial' | 'completed' | 'failed';

/** One upload (a root ingest plus its finish-learning resumes) and where it stands. */
export type UploadState = {
  root: UploadRecord;
  state: DocumentState;
  /** The most recent job of the upload (the one to poll). */
  latest: JobRecord;
  /** 0-based pieces of the document committed by any job of the upload. */
  learned: Set<number>;
};

const PAGE = 1000;

/** Pieces a job committed (document turns carry their piece index in `details.piece`). */
async function committedPieces(context: ServiceContext, jobId: string, into: Set<number>): Promise<void> {
  for (let fromIndex = 0; ; ) {
    const page = await context.store.turns.list({ jobId, fromIndex, limit: PAGE });
    if (page.length === 0) return;
    for (const turn of page) {
      if (turn.state !== 'committed') continue;
      into.add(turn.details.piece ?? turn.turnIndex);
    }
    fromIndex = page.at(-1)!.turnIndex + 1;
  }
}

/**
 * The state of each upload among `records` (every ingest of one source by one agent): running
 * jobs make it `ingesting`; otherwise `completed` when every piece was learned, `partial` when
 * some were, `failed` when none was.
 */
export async function uploadStates(context: ServiceContext, records: UploadRecord[]): Promise<UploadState[]> {
  const states: UploadState[] = [];
  for (const root of records.filter((record) => record.resumes === null)) {
    const members = records.filter((record) => record.jobId === root.jobId || record.resumes === root.jobId);
    const learned = new Set<number>();
    let running = false;
    let latest: JobRecord | null = null;
    for (const member of members) {
      const job = await context.store.jobs.get({ agentId: member.agentId, jobId: member.jobId });
      if (!job) continue;
      if (!FINAL_JOB_STATUSES.includes(job.status)) running = true;
      if (!latest || job.seq > latest.seq) latest = job;
      await committedPieces(context, job.id, learned);
    }
    if (!latest) continue;
    const state: DocumentState = running
      ? 'ingesting'
      : root.turnsTotal > 0 && learned.size >= root.turnsTotal
        ? 'completed'
        : learned.size > 0
          ? 'partial'
          : 'failed';
    states.push({ root, state, latest, learned });
  }
  return states;
}
