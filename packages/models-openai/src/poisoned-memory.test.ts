// The poisoned-memory suite (issue 33) with the LLM memory writer: a scripted writer model that
// extracts every quoted turn as one fact, word for word (as an obedient model would copy an attack),
// on every answering path of the service.
import type { GenerateRequest } from '@memory-agents/core/adapter';
import { describePoisonedMemoryConformance, mockLanguageModel, recordingLanguageModel, servicePoisonedMemoryTarget } from '@memory-agents/core/testing';
import { llmMemoryWriter } from './llm-memory-writer.js';

/** Extraction: one fact per quoted turn, its text as quoted; reconciliation: add everything. */
function scriptedWriterReply(request: GenerateRequest): string {
  const user = request.messages.find((message) => message.role === 'user')?.content ?? '';
  if (user.startsWith('New facts:')) return '{"decisions":[]}';
  const facts: { text: string; turns: number[] }[] = [];
  let current: { text: string[]; turn: number } | null = null;
  for (const line of user.split('\n')) {
    const header = /^> Turn (\d+) \| speaker: /.exec(line);
    if (header) {
      if (current) facts.push({ text: current.text.join('\n').trim(), turns: [current.turn] });
      current = { text: [], turn: Number(header[1]) };
    } else if (current && line.startsWith('>')) current.text.push(line.slice(2));
  }
  if (current) facts.push({ text: current.text.join('\n').trim(), turns: [current.turn] });
  return JSON.stringify({ facts: facts.filter((fact) => fact.text !== '') });
}

for (const path of ['chat', 'chat_stream', 'observe_and_respond'] as const) {
  describePoisonedMemoryConformance({
    name: `${path}, LLM writer (scripted)`,
    create: async () => {
      const writerModel = recordingLanguageModel(mockLanguageModel({ id: 'scripted-writer', generate: scriptedWriterReply }));
      return servicePoisonedMemoryTarget({ path, writer: llmMemoryWriter({ model: writerModel }), learningPrompts: () => writerModel.prompts });
    },
  });
}
