import { startScriptedOpenaiServer, type ScriptedBehaviour, type ScriptedOpenaiServer } from '../../packages/models-openai/src/testing/scripted-openai-server.js';

export { startScriptedOpenaiServer, type ScriptedOpenaiServer };

/** The key the tests hand the server through the environment; it must never appear in its output. */
export const API_KEY = 'sk-test-e2e-5f1c9a7d3b';

type Reply = Exclude<ScriptedBehaviour, { type: 'compute' }>;
type Message = { role: string; content: unknown };

const text = (message: Message | undefined) =>
  typeof message?.content === 'string' ? message.content : Array.isArray(message?.content) ? message.content.map((part: { text?: string }) => part.text ?? '').join('') : '';

const STOP = new Set(['the', 'a', 'an', 'is', 'does', 'do', 'who', 'what', 'where', 'when', 'of', 'in', 'to', 'and', 'with', 'my', 'i']);
const words = (value: string) => new Set(value.toLowerCase().match(/[\p{L}\p{N}]+/gu)?.filter((word) => !STOP.has(word)) ?? []);

/** The `usage` every extraction reply reports (a receipt's model tokens, issue 33). */
export const EXTRACTION_USAGE = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 };

/**
 * A provider that behaves like a small, obedient model, computed from the prompt:
 * - extraction (the LLM writer's first call): one fact per turn, the turn's text verbatim, reporting
 *   {@link EXTRACTION_USAGE};
 * - reconciliation: a fact saying someone "moved to" a place updates the stored memories saying
 *   that person "lives in" a place (the rest are added);
 * - answers: the memory item sharing the most words with the question, cited as `[n]`.
 */
export function obedientModel(body: { messages?: Message[] }): Reply {
  const messages = body.messages ?? [];
  const system = text(messages[0]);
  const user = text(messages.find((message) => message.role === 'user'));
  if (system.startsWith('You turn conversation turns into memories')) {
    const facts = [...user.matchAll(/^> Turn (\d+) \| speaker: ([^|\n]+?) \| said at: [^\n]*\n> ([^\n]+)/gm)].map((match) => ({
      text: match[3]!.trim(),
      turns: [Number(match[1])],
      speaker: match[2]!.trim(),
      occurred_at: null,
      keywords: [],
    }));
    return { type: 'answer', text: JSON.stringify({ facts }), usage: EXTRACTION_USAGE };
  }
  if (system.startsWith('You keep a memory store consistent')) {
    const facts = [...user.matchAll(/^> F(\d+)\. (.+)$/gm)].map((match) => ({ number: Number(match[1]), text: match[2]!.replace(/ \(date: [^)]*\)$/, '') }));
    const stored = [...user.matchAll(/^> (M\d+)\. (.+)$/gm)].map((match) => ({ ref: match[1]!, text: match[2]! }));
    const decisions = facts.flatMap((fact) => {
      const who = /^(\p{Lu}\p{L}+) moved to /u.exec(fact.text)?.[1];
      if (!who) return [];
      const targets = stored.filter((memory) => memory.text.startsWith(`${who} lives in `)).map((memory) => memory.ref);
      return targets.length > 0 ? [{ fact: fact.number, action: 'update', targets, text: fact.text }] : [];
    });
    return { type: 'answer', text: JSON.stringify({ decisions }) };
  }
  const question = /Question: (.*)$/s.exec(user)?.[1] ?? '';
  const items = [...user.matchAll(/^> \[(\d+)\](?: \([^)]*\))? (.+)$/gm)].map((match) => ({ number: Number(match[1]), text: match[2]! }));
  const wanted = words(question);
  let best: { number: number; text: string; score: number } | null = null;
  for (const item of items) {
    const score = [...words(item.text)].filter((word) => wanted.has(word)).length;
    if (score > 0 && (!best || score > best.score)) best = { ...item, score };
  }
  return { type: 'answer', text: best ? `From memory: ${best.text} [${best.number}]` : 'I do not remember that.' };
}

/** The `serve` arguments that point the server at the scripted provider (few, quick retries). */
export function modelArgs(provider: ScriptedOpenaiServer, extra: string[] = []): string[] {
  return ['--model-url', provider.baseURL, '--model', 'scripted-chat', '--model-max-retries', '1', '--model-timeout-ms', '2000', ...extra];
}

/** The chat-completion requests the provider received (writer and answer calls alike). */
export const chatRequests = (provider: ScriptedOpenaiServer) => provider.requests.filter((request) => request.route === 'chat');

/** The system prompt of a recorded chat-completion request. */
export const systemPrompt = (request: { body: { messages?: Message[] } }) => text(request.body.messages?.[0]);
/** The user message of a recorded chat-completion request. */
export const userPrompt = (request: { body: { messages?: Message[] } }) => text(request.body.messages?.find((message) => message.role === 'user'));
