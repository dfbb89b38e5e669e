import { describeMemoryWriterConformance } from '@memory-agents/core/testing';
import { llmMemoryWriter } from './llm-memory-writer.js';
import { openaiCompatibleLanguageModel } from './openai-compatible-language-model.js';
import { startScriptedOpenaiServer } from './testing/scripted-openai-server.js';

/**
 * The scripted provider as a writer model: an extraction prompt gets one fact per listed turn, a
 * reconciliation prompt updates the first fact over the first memory shown (so `supersedes` is used).
 */
function writerReply(body: { messages: { role: string; content: string }[] }) {
  const prompt = body.messages.map((message) => message.content).join('\n');
  if (/^M1\./m.test(prompt)) {
    return { type: 'answer' as const, text: JSON.stringify({ decisions: [{ fact: 1, action: 'update', targets: ['M1'], text: 'Ana moved from Porto to Lisbon.' }] }) };
  }
  const facts = [...prompt.matchAll(/^Turn (\d+) \| speaker: ([^|\n]+?) \| said at: [^\n]*\n(.+)$/gm)].map(([, turn, speaker, text]) => ({
    text: `${speaker} said: ${text}`,
    turns: [Number(turn)],
    speaker,
    occurred_at: null,
    keywords: [speaker],
  }));
  return { type: 'answer' as const, text: JSON.stringify({ facts }) };
}

describeMemoryWriterConformance({
  name: 'llmMemoryWriter (scripted OpenAI-compatible provider)',
  create: async () => {
    const server = await startScriptedOpenaiServer({ fallback: { chat: { type: 'compute', reply: writerReply } } });
    const model = openaiCompatibleLanguageModel({ baseURL: server.baseURL, model: 'scripted-writer', maxRetries: 0 });
    return {
      // One turn per batch, so a failed first call leaves later turns to fail earlier_turn_failed.
      port: llmMemoryWriter({ model, batchSize: 1 }),
      cleanup: () => server.close(),
      failNextWrite: () => server.enqueue('chat', { type: 'status', status: 500, body: '{"error":{"message":"scripted failure"}}' }),
      stallNextWrite: () => server.enqueue('chat', { type: 'stall' }),
    };
  },
});
