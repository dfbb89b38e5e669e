import { describe, expect, it } from 'vitest';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import type { MemoryRecord } from '../ports/memory-index.js';
import type { WriterTurn } from '../ports/memory-writer.js';
import { RETRIEVAL_WEIGHTS, retrieve } from './retrieve.js';

const embedder = hashedNgramEmbedder();

async function learn(sessions: { timestamp: string; turns: [speaker: string, text: string][] }[]) {
  const index = inMemoryMemoryIndex();
  await index.init();
  const writer = defaultMemoryWriter();
  for (const [s, session] of sessions.entries()) {
    const turns: WriterTurn[] = session.turns.map(([speaker, text], turnIndex) => ({
      turnIndex,
      speaker,
      text,
      timestamp: session.timestamp,
      tags: [],
      source: { kind: 'turn', threadId: 'thread_1', observationId: `obs_${s}`, turnIndex },
    }));
    const { outcomes } = await writer.write({ agentId: 'agent_1', turns, searchSimilar: async () => [] });
    const records = outcomes.flatMap((outcome) =>
      outcome.ok
        ? outcome.memories.map(
            (memory, piece): MemoryRecord => ({
              ...memory,
              id: `mem_${s}_${outcome.turnIndex}_${piece}`,
              organizationId: 'org_1',
              agentId: 'agent_1',
              vector: embedder.embedSync(memory.text),
              createdAt: session.timestamp,
              provenance: { writer: 'unknown', jobId: null, span: null },
              alsoFrom: [],
              validFrom: null,
              validTo: null,
              supersededBy: null,
              suspicious: false, expiresAt: null,
            }),
          )
        : [],
    );
    await index.upsert({ records, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
  }
  return index;
}

describe('retrieve with explain', () => {
  const sessions = [
    {
      timestamp: '2023-05-08T13:56:00.000Z',
      turns: [
        ['Caroline', 'Hey Melanie! Good to see you, Melanie!'],
        ['Melanie', 'Hi Caroline! I just got some new running shoes.'],
        ['Caroline', 'I have been researching adoption agencies lately.'],
        ['user', 'I led three projects at work this year.'],
      ],
    },
    {
      timestamp: '2023-08-14T10:00:00.000Z',
      turns: [
        ['Melanie', 'Thanks, Caroline, that means a lot.'],
        ['Caroline', 'We painted a sunset with the kids last weekend.'],
      ],
    },
  ] satisfies { timestamp: string; turns: [string, string][] }[];
  const now = Date.parse('2024-01-01T00:00:00Z');
  const queries = ['What did Caroline research?', 'What did Melanie paint in August 2023?', 'How many projects have I led?', 'running shoes'];

  it('ranks exactly as without it, and each item\'s contributions add up to its score', async () => {
    const index = await learn(sessions);
    for (const query of queries) {
      const plain = await retrieve(index, embedder, { agentId: 'agent_1', query, maxContextChars: 4000, now });
      const explained = await retrieve(index, embedder, { agentId: 'agent_1', query, maxContextChars: 4000, now, explain: true });
      expect(explained.ranked.map((item) => [item.record.id, item.score])).toEqual(plain.ranked.map((item) => [item.record.id, item.score]));
      expect(explained.memoryContext).toBe(plain.memoryContext);
      expect(plain.ranked.every((item) => item.contributions === undefined)).toBe(true);
      for (const item of explained.ranked) {
        const sum = Object.values(item.contributions!).reduce((total, value) => total + value, 0);
        expect(sum).toBeCloseTo(item.score, 12);
      }
    }
  });

  it('names the signals that moved a memory: the named speaker, a named time, the asker', async () => {
    const index = await learn(sessions);
    const research = await retrieve(index, embedder, { agentId: 'agent_1', query: 'What did Caroline research?', maxContextChars: 4000, now, explain: true });
    const adoption = research.ranked.find((item) => item.record.text.includes('adoption'))!;
    expect(adoption.contributions!.speaker).toBe(RETRIEVAL_WEIGHTS.speaker);
    expect(adoption.contributions!.lexical).toBeGreaterThan(0);
    expect(adoption.contributions!.episode).toBeGreaterThan(0);

    const painted = await retrieve(index, embedder, { agentId: 'agent_1', query: 'What did Melanie paint in August 2023?', maxContextChars: 4000, now, explain: true });
    expect(painted.ranked.find((item) => item.record.text.includes('sunset'))!.contributions!.time).toBe(RETRIEVAL_WEIGHTS.time);

    const led = await retrieve(index, embedder, { agentId: 'agent_1', query: 'How many projects have I led?', maxContextChars: 4000, now, explain: true });
    const projects = led.ranked.find((item) => item.record.text.includes('projects'))!;
    expect(projects.contributions!.self).toBe(RETRIEVAL_WEIGHTS.self);
    expect(projects.contributions!.semantic).toBeGreaterThan(0);
  });
});
