import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import type { MemoryWriter } from '../ports/memory-writer.js';

/**
 * A test double behind the MemoryWriter port that paraphrases as a model writer would: the default
 * writer, except that a memory saying "I moved to <city>" comes out as `rewrite(speaker, city)` (no
 * span: not the speaker's words).
 */
export function paraphrasingWriter(id: string, rewrite: (speaker: string, city: string) => string): MemoryWriter {
  const inner = defaultMemoryWriter();
  return {
    specificationVersion: 'v1',
    id,
    ...(inner.capabilities ? { capabilities: inner.capabilities } : {}),
    async write(request) {
      const result = await inner.write(request);
      return {
        ...result,
        outcomes: result.outcomes.map((outcome) => {
          if (!outcome.ok) return outcome;
          return {
            ...outcome,
            memories: outcome.memories.map((memory) => {
              const moved = /I moved to (\w+)/.exec(memory.text);
              return moved ? { ...memory, text: rewrite(memory.speaker ?? 'They', moved[1]!), span: null } : memory;
            }),
          };
        }),
      };
    },
  };
}
