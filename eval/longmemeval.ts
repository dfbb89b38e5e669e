/**
 * LongMemEval_S: one agent per question learns the question's haystack (sessions in date order,
 * each at its `haystack_dates` entry, the role as speaker), then the question is asked of its
 * retrieval and scored by session recall_all@k and turn recall@k.
 */
import { appendFile } from 'node:fs/promises';
import { ask, forget, learnConversation, type EvalConversation, type EvalEnvironment } from './harness.js';
import { ndcgAt, newestFirst, recallAllAt, recallAt, summarize, uniqueInOrder, type SummaryRow } from './metrics.js';

export type LongMemEvalTurn = { role: string; content: string; has_answer?: boolean };
export type LongMemEvalQuestion = {
  question_id: string;
  question_type: string;
  question: string;
  answer?: unknown;
  question_date: string;
  haystack_session_ids: string[];
  haystack_dates: string[];
  haystack_sessions: LongMemEvalTurn[][];
  answer_session_ids: string[];
};

/** "2023/08/11 (Fri) 15:58" → "2023-08-11T15:58:00.000Z" (no time zone in the data; read as UTC). */
export function parseLongMemEvalDate(value: string): string {
  const match = /^\s*(\d{4})\/(\d{1,2})\/(\d{1,2})(?:\s*\([A-Za-z]+\))?(?:\s+(\d{1,2}):(\d{2}))?\s*$/.exec(value);
  if (!match) throw new Error(`unreadable LongMemEval date: ${JSON.stringify(value)}`);
  const [, year, month, day, hour, minute] = match;
  return new Date(Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour ?? 0), Number(minute ?? 0))).toISOString();
}

const turnRef = (sessionId: string, turnIndex: number) => `${sessionId}#${turnIndex}`;

/** The haystack as one conversation, sessions sorted by date (stable for equal dates). */
export function longMemEvalConversation(question: LongMemEvalQuestion): EvalConversation {
  const sessions = question.haystack_sessions.map((turns, i) => {
    const id = question.haystack_session_ids[i]!;
    return {
      id,
      timestamp: parseLongMemEvalDate(question.haystack_dates[i]!),
      turns: turns.map((turn, turnIndex) => ({ ref: turnRef(id, turnIndex), speaker: turn.role, text: turn.content })),
    };
  });
  const order = sessions.map((session, i) => ({ session, i })).sort((a, b) => a.session.timestamp.localeCompare(b.session.timestamp) || a.i - b.i);
  return { id: question.question_id, sessions: order.map(({ session }) => session) };
}

/**
 * How the question reaches retrieval. `plain`: the question as asked. `dated`: the question with
 * the date it is asked on, as a client that knows "now" would say it ("Today is 2023/12/21 (Thu).").
 */
export type QueryMode = 'plain' | 'dated';

export function longMemEvalQuery(question: LongMemEvalQuestion, mode: QueryMode): string {
  if (mode === 'plain') return question.question;
  return `${question.question} (Today is ${question.question_date.replace(/\s+\d{1,2}:\d{2}$/, '')}.)`;
}

/** One line of `longmemeval.jsonl`, exactly the shape. */
export type LongMemEvalLine = {
  question_id: string;
  question_type: string;
  ranked_sessions: string[];
  ranked_turns: [string, number][];
};

export type LongMemEvalScore = { questionType: string; isAbstention: boolean; recall: Record<string, number | null>; ms: number };

export type LongMemEvalRunOptions = {
  maxContextChars: number;
  queryMode: QueryMode;
  jsonlPath?: string;
  /** Keep each agent (and its memories) after its question. @default false */
  keepAgents?: boolean;
  /** Runs after each question's history is learned, before the question (a maintenance pass, issue 43). */
  afterLearning?: (agentId: string) => Promise<void>;
  onQuestion?: (questionId: string, done: number, total: number) => void;
};

export type LongMemEvalRun = { lines: LongMemEvalLine[]; scores: LongMemEvalScore[]; ingestMs: number; turns: number };

export async function runLongMemEval(env: EvalEnvironment, questions: readonly LongMemEvalQuestion[], options: LongMemEvalRunOptions): Promise<LongMemEvalRun> {
  const run: LongMemEvalRun = { lines: [], scores: [], ingestMs: 0, turns: 0 };
  for (const [done, question] of questions.entries()) {
    const learned = await learnConversation(env, longMemEvalConversation(question));
    await options.afterLearning?.(learned.agentId);
    run.ingestMs += learned.ingestMs;
    run.turns += learned.turnCount;
    const asked = await ask(env, learned, longMemEvalQuery(question, options.queryMode), options.maxContextChars);
    if (!options.keepAgents) await forget(env, learned);

    const isAbstention = question.question_id.endsWith('_abs');
    const rankedSessions = uniqueInOrder(asked.ranked.map((turn) => turn.sessionId));
    const packedSessions = uniqueInOrder(asked.packed.map((turn) => turn.sessionId));
    const answerTurns = question.haystack_sessions.flatMap((turns, i) =>
      turns.flatMap((turn, turnIndex) => (turn.has_answer === true ? [turnRef(question.haystack_session_ids[i]!, turnIndex)] : [])),
    );
    const rankedTurns = asked.ranked.map((turn) => turn.ref);
    const sessionEvidence = isAbstention ? [] : question.answer_session_ids;
    const recall: Record<string, number | null> = {
      'S-all@5': recallAllAt(rankedSessions, sessionEvidence, 5),
      'S-all@10': recallAllAt(rankedSessions, sessionEvidence, 10),
      'NDCG@5': ndcgAt(rankedSessions, sessionEvidence, 5),
      'S-all@ctx': recallAllAt(packedSessions, sessionEvidence, Number.POSITIVE_INFINITY),
      'T@10': recallAt(rankedTurns, answerTurns, 10),
      'T@ctx': recallAt(asked.packed.map((turn) => turn.ref), answerTurns, Number.POSITIVE_INFINITY),
      // Issue 32: the newest evidence session ranks above the stale ones (questions with 2+ evidence sessions).
      newest: newestFirst(rankedSessions, isAbstention ? [] : evidenceByDate(question)),
    };
    run.scores.push({ questionType: question.question_type, isAbstention, recall, ms: asked.ms });
    const sessionOfRef = new Map(asked.ranked.map((turn) => [turn.ref, turn.sessionId]));
    const line: LongMemEvalLine = {
      question_id: question.question_id,
      question_type: question.question_type,
      ranked_sessions: rankedSessions.slice(0, 50),
      ranked_turns: rankedTurns.slice(0, 50).map((ref) => [sessionOfRef.get(ref)!, Number(ref.slice(ref.lastIndexOf('#') + 1))]),
    };
    run.lines.push(line);
    if (options.jsonlPath) await appendFile(options.jsonlPath, `${JSON.stringify(line)}\n`);
    options.onQuestion?.(question.question_id, done + 1, questions.length);
  }
  return run;
}

/** The question's evidence sessions, oldest first (haystack dates; stable for equal dates). */
export function evidenceByDate(question: LongMemEvalQuestion): string[] {
  const wanted = new Set(question.answer_session_ids);
  return question.haystack_session_ids
    .map((id, i) => ({ id, i, at: parseLongMemEvalDate(question.haystack_dates[i]!) }))
    .filter((session) => wanted.has(session.id))
    .sort((a, b) => a.at.localeCompare(b.at) || a.i - b.i)
    .map((session) => session.id);
}

const TYPE_ORDER = ['single-session-user', 'single-session-assistant', 'single-session-preference', 'multi-session', 'knowledge-update', 'temporal-reasoning'];

/** Per question type and overall; session metrics leave out abstention (`_abs`) questions. */
export function summarizeLongMemEval(run: LongMemEvalRun): SummaryRow[] {
  return summarize(run.scores, (score) => score.questionType, (score) => score.recall, TYPE_ORDER);
}
