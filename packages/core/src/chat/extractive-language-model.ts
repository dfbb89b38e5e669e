import { analyze } from '../embedding/text-analysis.js';
import { LanguageModelError, type AnswerContextItem, type GenerateRequest, type GenerateResult, type LanguageModel } from '../ports/language-model.js';

/** The answer when memory holds nothing relevant. */
export const NOTHING_RELEVANT = "I don't have anything in memory about that yet.";

// A sentence ends at . ! ? … followed by whitespace (not inside 3.5, e-mail addresses or URLs).
const SENTENCE_BREAK = /(?<=[.!?…])\s+|\n+/u;
const LIMITS = { brief: 3, standard: 5, detailed: Number.POSITIVE_INFINITY } as const;

type Candidate = { item: AnswerContextItem; sentence: string; score: number; order: number };

/**
 * The default `LanguageModel`: no network. It answers from the numbered memory items of an answer
 * task by choosing the sentences that share the most (rarest) words with the question, each cited
 * as `[n]`. `brief` keeps the key facts in 2-4 sentences, `standard` up to 5, `detailed` every
 * relevant sentence as a list. When no item shares a word with the question it says so plainly.
 */
export function extractiveLanguageModel(): LanguageModel {
  const generate = async (request: GenerateRequest): Promise<GenerateResult> => {
    if (request.signal?.aborted) throw abortError();
    if (!request.task) {
      throw new LanguageModelError('failed', 'The extractive model only answers from memory items (an answer task); configure a network model for free prompts.');
    }
    return answer(request.task.question, request.task.items, request.task.answerLength);
  };
  return {
    specificationVersion: 'v1',
    id: 'extractive-v1',
    generate,
    async *stream(request) {
      const { text } = await generate(request);
      // Word-sized deltas, so a stream looks like one from a network model.
      for (const piece of text.match(/\S+\s*/g) ?? []) {
        if (request.signal?.aborted) throw abortError();
        yield piece;
      }
    },
  };
}

function answer(question: string, items: AnswerContextItem[], answerLength: 'brief' | 'standard' | 'detailed'): GenerateResult {
  const questionTerms = new Set(analyze(question));
  const candidates: Candidate[] = [];
  const documentFrequency = new Map<string, number>();
  const perSentenceTerms: Set<string>[] = [];
  let order = 0;
  // Superseded memories (history) are not answers of their own; they say what the answer replaced.
  const history = new Map<number, AnswerContextItem[]>();
  for (const item of items) if (item.replacedBy !== undefined) history.set(item.replacedBy, [...(history.get(item.replacedBy) ?? []), item]);
  for (const item of items) {
    if (item.replacedBy !== undefined) continue;
    for (const part of item.text.split(SENTENCE_BREAK)) {
      const sentence = part.trim();
      if (sentence.length < 3) continue;
      const terms = new Set(analyze(`${sentence} ${item.speaker ?? ''}`));
      perSentenceTerms.push(terms);
      for (const term of terms) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
      candidates.push({ item, sentence, score: 0, order: order++ });
    }
  }
  const total = Math.max(1, candidates.length);
  candidates.forEach((candidate, i) => {
    let score = 0;
    for (const term of perSentenceTerms[i]!) {
      if (questionTerms.has(term)) score += Math.log(1 + total / (documentFrequency.get(term) ?? 1));
    }
    // Earlier (better-ranked) items win ties.
    candidate.score = score > 0 ? score + 1 / (10 + candidate.item.number) : 0;
  });
  const relevant = candidates.filter((candidate) => candidate.score > 0).sort((a, b) => b.score - a.score || a.order - b.order);
  if (relevant.length === 0) return { text: NOTHING_RELEVANT, citedItems: [] };

  const chosen = relevant.slice(0, LIMITS[answerLength]);
  if (answerLength === 'brief' && chosen.length === 1 && relevant.length > 1) chosen.push(relevant[1]!);
  // Read the chosen sentences in the order memory holds them (rank, then position), not by score.
  chosen.sort((a, b) => a.order - b.order);
  const cited = [...new Set(chosen.flatMap((candidate) => [candidate.item.number, ...(history.get(candidate.item.number) ?? []).map((old) => old.number)]))];
  const told = new Set<number>();
  // The first sentence of an item that replaced older memories says so, citing them (issue 32).
  const changed = (item: AnswerContextItem) => {
    const older = history.get(item.number);
    if (!older || told.has(item.number)) return '';
    told.add(item.number);
    return ` (this changed: earlier ${older.map((old) => `${old.occurredAt ? `on ${old.occurredAt.slice(0, 10)}, ` : ''}"${old.text.trim()}" [${old.number}]`).join('; ')})`;
  };
  const line = (candidate: Candidate) => `${attribution(candidate.item)}${candidate.sentence} [${candidate.item.number}]${changed(candidate.item)}`;
  const text =
    answerLength === 'detailed' && chosen.length > 2
      ? `From memory:\n${chosen.map((candidate) => `- ${line(candidate)}`).join('\n')}`
      : chosen.map(line).join(' ');
  return { text, citedItems: cited };
}

function attribution(item: AnswerContextItem): string {
  const date = item.occurredAt?.slice(0, 10);
  const who = item.speaker && item.speaker !== 'user' ? item.speaker : null;
  if (!date && !who) return '';
  return `${[who, date && `on ${date}`].filter(Boolean).join(' ')}: `;
}

function abortError(): Error {
  const error = new Error('The operation was aborted.');
  error.name = 'AbortError';
  return error;
}
