import { findAgent, findThread } from '../agents/lookup.js';
import { ServiceError } from '../errors/index.js';
import type { JobRecord, TurnRecord } from '../ports/store/index.js';
import type { ThreadTurnsOutput } from '../schemas/outputs.js';
import { threadTurnsQuery } from '../schemas/turns.js';
import type { ThreadTurnsRequest } from '../service/requests.js';
import type { ServiceContext } from '../service/context.js';
import { parseQuery } from '../validation/parse.js';

type ThreadTurn = ThreadTurnsOutput['turns'][number];

/**
 * `GET .../threads/{thread_id}/turns` (an extension, issue 45): the turns the thread observed, oldest
 * observation first and each observation's turns in order, `limit` a page. Narrowed like every
 * thread route (`findThread`: another organization's or another person's thread is 404). The cursor
 * is `<seq>.<turn index>` of the page's next turn: the job's arrival order and the turn in it.
 */
export function createThreadTurns(context: ServiceContext) {
  return async function turns({ caller, agentId, threadId, query = {} }: ThreadTurnsRequest): Promise<ThreadTurnsOutput> {
    const { limit, cursor, observation_id: observationId } = parseQuery(threadTurnsQuery, query);
    const agent = await findAgent(context, caller, agentId);
    const thread = await findThread(context, caller, agent, threadId);
    let jobs = await context.store.jobs.allForThread({ threadId: thread.id });
    if (observationId !== undefined) {
      jobs = jobs.filter((job) => job.id === observationId);
      if (jobs.length === 0) throw new ServiceError('not_found', `Observation ${observationId} was not found in this thread.`);
    }
    let start = 0;
    let fromIndex = 0;
    if (cursor !== undefined) {
      const [seq, index] = cursor.split('.').map(Number) as [number, number];
      start = jobs.findIndex((job) => job.seq === seq);
      if (start < 0) throw new ServiceError('invalid_request', 'cursor is not a value returned as next_cursor for this thread and these filters.', { status: 400 });
      fromIndex = index;
    }
    // One more turn than the page, to know whether another page follows.
    const found: { job: JobRecord; turn: TurnRecord }[] = [];
    for (let i = start; i < jobs.length && found.length <= limit; i++) {
      const job = jobs[i]!;
      const stored = await context.store.turns.list({ jobId: job.id, fromIndex: i === start ? fromIndex : 0, limit: limit + 1 - found.length });
      for (const turn of stored) found.push({ job, turn });
    }
    const next = found[limit];
    return {
      agent_id: agent.id,
      thread_id: thread.id,
      turns: found.slice(0, limit).map(({ job, turn }) => present(job, turn)),
      total: jobs.reduce((sum, job) => sum + job.turnsTotal, 0),
      next_cursor: next ? `${next.job.seq}.${next.turn.turnIndex}` : '',
    };
  };
}

function present(job: JobRecord, turn: TurnRecord): ThreadTurn {
  const details = turn.details;
  return {
    observation_id: job.id,
    turn_index: turn.turnIndex,
    kind: job.kind,
    speaker: turn.speaker,
    text: turn.text,
    timestamp: turn.timestamp,
    tags: turn.tags,
    learning: turn.state === 'committed' ? 'learned' : turn.state === 'failed' ? 'not_learned' : 'pending',
    not_learned_reason: turn.state === 'failed' ? turn.failureReason : null,
    document:
      details.sourceId === undefined
        ? null
        : { source_id: details.sourceId, filename: details.filename, page: details.page, page_end: details.pageEnd, piece: details.piece },
  };
}
