import type { AnswerContextItem, AnswerLength, ModelMessage } from '../ports/language-model.js';

/** Options of {@link buildAnswerMessages}. */
export type BuildAnswerMessagesOptions = {
  /** The user's message. */
  question: string;
  /** Numbered memory items; the model cites them as `[n]`. */
  items: readonly AnswerContextItem[];
  /** The chat request's `answer_length`, given to the model as an instruction (never a cut). */
  answerLength: AnswerLength;
  /**
   * The agent's own instructions (role, objective). They come first in the system message; the
   * rules on memory items, citations and length are always appended after them.
   */
  systemPrompt?: string;
  /** Images of the chat turn, sent with the question as image parts to a vision-capable model. */
  images?: NonNullable<ModelMessage['images']>;
};

/** The instruction for each `answer_length` (spec, Chat: "an instruction to the agent, not a cut"). */
export const ANSWER_LENGTH_INSTRUCTIONS: Record<AnswerLength, string> = {
  brief: 'Answer briefly: give only the most important facts, in 2 to 4 sentences.',
  standard: 'Answer completely but concisely: include the facts that answer the question and leave out the rest.',
  detailed:
    'Answer in detail: include every relevant fact, date, name, number and direct quote the memory items hold. ' +
    'Use a list or a table when the user asks for one or when there are many items. Do not summarise details away.',
};

const RULES = [
  'You answer from the numbered memory items below. They are what you remember about the user and the documents you were given.',
  'Cite the items you rely on with their numbers in square brackets, like [1] or [2][4], right after the statement they support.',
  'Use only the items; if they do not contain the answer, say that you do not remember it instead of guessing.',
  'When items disagree, prefer the most recent one and say that it changed.',
  'An item marked "no longer current, replaced by [n]" is history: answer with the current item [n] and say what changed and when (for example "moved from Paris to Berlin in March [1][2]"), citing both.',
  'Write the whole answer; never stop in the middle of it.',
];

/**
 * The prompt of a grounded answer: a system message (the agent's prompt, then the rules and the
 * `answer_length` instruction) and a user message listing the memory items as
 * `[n] (date; speaker; source) text` followed by the question (and the turn's images, if any).
 * Chat sends it as `GenerateRequest.messages` to every model; a network model needs nothing else.
 *
 * @example
 * const messages = buildAnswerMessages({ question: 'Where does Ana live?', items, answerLength: 'brief' });
 * const result = await model.generate({ messages, task: { kind: 'answer', question, items, answerLength: 'brief' } });
 */
export function buildAnswerMessages(options: BuildAnswerMessagesOptions): ModelMessage[] {
  const system = [options.systemPrompt?.trim(), RULES.join('\n'), ANSWER_LENGTH_INSTRUCTIONS[options.answerLength]]
    .filter((part): part is string => Boolean(part))
    .join('\n\n');
  const items = options.items.length === 0 ? 'Memory items: none.' : `Memory items:\n${options.items.map(formatItem).join('\n')}`;
  const images = options.images ?? [];
  return [
    { role: 'system', content: system },
    { role: 'user', content: `${items}\n\nQuestion: ${options.question}`, ...(images.length > 0 ? { images } : {}) },
  ];
}

function formatItem(item: AnswerContextItem): string {
  const facts = [
    item.occurredAt ? `date: ${item.occurredAt}` : null,
    item.speaker ? `speaker: ${item.speaker}` : null,
    item.label && item.label !== item.speaker ? `source: ${item.label}` : null,
    item.replacedBy === undefined ? null : `no longer current, replaced by [${item.replacedBy}]`,
  ]
    .filter((part): part is string => part !== null)
    .join('; ');
  // Newlines inside an item would read as the start of another item.
  const text = item.text.replace(/\s*\n\s*/g, ' ').trim();
  return `[${item.number}]${facts ? ` (${facts})` : ''} ${text}`;
}

/**
 * The item numbers cited in `text` as `[n]` (also `[1, 3]`, `[1; 3]` and `[2][4]`), in order of
 * first appearance, without duplicates, keeping only `1..itemCount`.
 */
export function parseCitations(text: string, itemCount: number): number[] {
  const cited: number[] = [];
  for (const match of text.matchAll(/\[(\s*\d+\s*(?:[,;]\s*\d+\s*)*)\]/g)) {
    for (const part of (match[1] ?? '').split(/[,;]/)) {
      const value = Number(part.trim());
      if (Number.isInteger(value) && value >= 1 && value <= itemCount && !cited.includes(value)) cited.push(value);
    }
  }
  return cited;
}

/** The system prompt an agent's config gives its answers: who it is and what it is for. */
export function agentSystemPrompt(config: { role: string; objective: string }): string {
  return `Your role: ${config.role.trim()}\nYour objective: ${config.objective.trim()}`;
}
