/**
 * LoCoMo (snap-research/LoCoMo): one agent per conversation, each session observed at its
 * `session_N_date_time`, every question asked of the agent's retrieval and scored by evidence
 * recall over `dia_id`s.
 */
import { appendFile } from 'node:fs/promises';
import { ask, forget, learnConversation, type EvalConversation, type EvalEnvironment, type EvalTurn } from './harness.js';
import { recallAt, summarize, type SummaryRow } from './metrics.js';

export type LocomoTurn = { speaker: string; dia_id: string; text: string; img_url?: string[]; blip_caption?: string };
export type LocomoQa = { question: string; answer?: unknown; adversarial_answer?: unknown; evidence: string[]; category: number };
export type LocomoSample = { sample_id: string; conversation: Record<string, unknown>; qa: LocomoQa[] };

export const LOCOMO_CATEGORIES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' };

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00.000Z" (the dataset has no time zone; read as UTC). */
export function parseLocomoDate(value: string): string {
  const match = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(value);
  if (!match) throw new Error(`unreadable LoCoMo date: ${JSON.stringify(value)}`);
  const [, hour, minute, half, day, monthName, year] = match;
  const month = MONTHS.findIndex((name) => name.startsWith(monthName!.toLowerCase().slice(0, 3)));
  if (month < 0) throw new Error(`unknown month in LoCoMo date: ${JSON.stringify(value)}`);
  const hours = (Number(hour) % 12) + (half!.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(year), month, Number(day), hours, Number(minute))).toISOString();
}

/**
 * The text a client would observe for a turn. A shared photo arrives in LoCoMo as an image URL with a
 * caption; the caption is part of what was said (the original benchmark feeds it to its models too).
 */
export function locomoTurnText(turn: LocomoTurn): string {
  return turn.blip_caption ? `${turn.text}\n\n[shared a photo: ${turn.blip_caption}]` : turn.text;
}

/** Sessions in order (`session_1`, `session_2`, …), skipping dates listed for sessions without turns. */
export function locomoConversation(sample: LocomoSample): EvalConversation {
  const conversation = sample.conversation;
  const numbers = Object.keys(conversation)
    .map((key) => /^session_(\d+)$/.exec(key)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const sessions = numbers
    .map((n) => {
      const turns = (conversation[`session_${n}`] as LocomoTurn[] | undefined) ?? [];
      const date = conversation[`session_${n}_date_time`];
      return {
        id: `session_${n}`,
        timestamp: parseLocomoDate(String(date)),
        turns: turns.map((turn): EvalTurn => ({ ref: turn.dia_id, speaker: turn.speaker, text: locomoTurnText(turn) })),
      };
    })
    .filter((session) => session.turns.length > 0);
  return { id: sample.sample_id, sessions };
}

/** Evidence ids of a question: entries split on ";", trimmed; only ids naming a turn of the conversation count. */
export function locomoEvidence(qa: LocomoQa, turnIds: ReadonlySet<string>): { evidence: string[]; unmatched: string[] } {
  const ids = [...new Set(qa.evidence.flatMap((entry) => entry.split(';')).map((id) => id.trim()).filter((id) => id !== ''))];
  return { evidence: ids.filter((id) => turnIds.has(id)), unmatched: ids.filter((id) => !turnIds.has(id)) };
}

/** One line of `locomo.jsonl`, exactly the shape. */
export type LocomoLine = { sample_id: string; qa_index: number; category: number; ranked: string[] };

/** Per-question scores kept for the summary (not written to the JSONL). */
export type LocomoScore = { category: number; recall: Record<string, number | null>; ms: number };

export type LocomoRunOptions = { maxContextChars: number; jsonlPath?: string; /** Keep each agent (and its memories) after its questions. @default false */ keepAgents?: boolean; /** Runs after each conversation is learned, before its questions (a maintenance pass, issue 43). */ afterLearning?: (agentId: string) => Promise<void>; onSample?: (sampleId: string, done: number, total: number) => void };

export type LocomoRun = { lines: LocomoLine[]; scores: LocomoScore[]; ingestMs: number; turns: number; unmatchedEvidence: number; questionsWithoutEvidence: number };

export const LOCOMO_KS = [5, 10, 25] as const;

/** Learns each sample, asks every question, scores it; appends JSONL lines as it goes when `jsonlPath` is set. */
export async function runLocomo(env: EvalEnvironment, samples: readonly LocomoSample[], options: LocomoRunOptions): Promise<LocomoRun> {
  const run: LocomoRun = { lines: [], scores: [], ingestMs: 0, turns: 0, unmatchedEvidence: 0, questionsWithoutEvidence: 0 };
  for (const [done, sample] of samples.entries()) {
    const conversation = locomoConversation(sample);
    const turnIds = new Set(conversation.sessions.flatMap((session) => session.turns.map((turn) => turn.ref)));
    const learned = await learnConversation(env, conversation);
    await options.afterLearning?.(learned.agentId);
    run.ingestMs += learned.ingestMs;
    run.turns += learned.turnCount;
    const lines: LocomoLine[] = [];
    for (const [qaIndex, qa] of sample.qa.entries()) {
      const asked = await ask(env, learned, qa.question, options.maxContextChars);
      const ranked = asked.ranked.map((turn) => turn.ref);
      const { evidence, unmatched } = locomoEvidence(qa, turnIds);
      run.unmatchedEvidence += unmatched.length;
      if (evidence.length === 0) run.questionsWithoutEvidence++;
      const recall: Record<string, number | null> = {};
      for (const k of LOCOMO_KS) recall[`R@${k}`] = recallAt(ranked, evidence, k);
      recall['R@ctx'] = recallAt(asked.packed.map((turn) => turn.ref), evidence, Number.POSITIVE_INFINITY);
      run.scores.push({ category: qa.category, recall, ms: asked.ms });
      lines.push({ sample_id: sample.sample_id, qa_index: qaIndex, category: qa.category, ranked: ranked.slice(0, 50) });
    }
    run.lines.push(...lines);
    if (options.jsonlPath) await appendFile(options.jsonlPath, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    if (!options.keepAgents) await forget(env, learned);
    options.onSample?.(sample.sample_id, done + 1, samples.length);
  }
  return run;
}

/** Per category (named as in the dataset README) and overall, over questions that have evidence. */
export function summarizeLocomo(run: LocomoRun): SummaryRow[] {
  const name = (category: number) => `${category} ${LOCOMO_CATEGORIES[category] ?? 'unknown'}`;
  return summarize(run.scores.filter((score) => score.recall['R@5'] !== null), (score) => name(score.category), (score) => score.recall, [1, 2, 3, 4, 5].map(name));
}
