import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { NEIGHBOUR_MAX_CHARS } from '../memory/default-memory-writer.js';
import { withoutCopy } from './neighbour-keywords.js';

const say = (speaker: string, text: string, minute: number) => ({ speaker, timestamp: `2024-03-10T10:${String(minute).padStart(2, '0')}:00Z`, content: [{ type: 'text' as const, text }] });
const erased = (text: string, start: number | null = null) => ({ text, provenance: { writer: 'verbatim-v2', jobId: null, span: start === null ? null : { start, end: start + text.length } } });

describe('withoutCopy', () => {
  it('removes the last whole-word copy of the text and nothing else', () => {
    expect(withoutCopy('Ana 2024 I said yes I said yes again', erased('I said yes'))).toBe('Ana 2024 I said yes again');
    expect(withoutCopy('Ana cats concatenate', erased('cat'))).toBe('Ana cats concatenate');
    expect(withoutCopy('Ana went home', erased('nothing here'))).toBe('Ana went home');
    expect(withoutCopy('Ana went home', erased('   '))).toBe('Ana went home');
  });

  it('removes a copy the writer cut at NEIGHBOUR_MAX_CHARS of its turn, only with a span saying so', () => {
    const long = `${'word '.repeat(190)}kumquatlord ends here with more words after the cut`;
    const start = 40;
    const fitted = long.slice(0, NEIGHBOUR_MAX_CHARS - start);
    const keywords = `Ben 2024 own words ${fitted} next turn words`;
    expect(withoutCopy(keywords, erased(long, start))).toBe('Ben 2024 own words next turn words');
    expect(withoutCopy(keywords, erased(long))).toBe(keywords);
  });
});

describe('deleting a memory (issue 41)', () => {
  it('takes its words out of the neighbours\' keywords: a word only it said finds nothing; the neighbours stay findable by their own', async () => {
    const index = inMemoryMemoryIndex();
    const { service, owner, agentId, observeSettled } = await learningService({ index });
    await observeSettled([
      say('Ana', 'We should plan the trip to the coast.', 0),
      say('Ben', 'Sounds good, I can drive the van.', 1),
      say('Ana', 'My locker combination is quinbrellow seven.', 2),
      say('Ben', 'I will bring sandwiches and lemonade.', 3),
      say('Ana', 'Let us leave early on Saturday.', 4),
      say('Ben', 'The forecast says sunshine all weekend.', 5),
    ]);
    // The memories the full-text channel finds for `query` (the vector channel finds something for anything).
    const search = async (query: string) =>
      (await service.memories.search({ caller: owner, agentId, body: { query, limit: 10 } })).hits.filter((hit) => hit.signals.full_text > 0).map((hit) => hit.memory.text);
    const all = (await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories;
    const secret = all.find((memory) => memory.text.includes('quinbrellow'))!;
    // Before: the neighbours are found by the secret word too (their keywords hold the turn).
    expect((await search('quinbrellow')).length).toBeGreaterThan(1);
    await service.memories.delete({ caller: owner, agentId, memoryId: secret.memory_id });
    expect(await search('quinbrellow')).toEqual([]);
    for (const own of ['van', 'sandwiches', 'coast', 'Saturday', 'sunshine']) expect((await search(own))[0], own).toContain(own);
    const records = (await index.list({ agentId, includeHistory: true, limit: 100 })).records;
    expect(records).toHaveLength(5);
    for (const record of records) expect(record.keywords).not.toContain('quinbrellow');
    // Words of the kept turns stay in their neighbours' keywords.
    expect(records.find((record) => record.text.includes('sandwiches'))!.keywords).toContain('drive the van');
  });
});
