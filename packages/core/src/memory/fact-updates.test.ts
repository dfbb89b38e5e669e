import { describe, expect, it } from 'vitest';
import { extractClaims, supersedesText } from './fact-updates.js';
import { defaultMemoryWriter } from './default-memory-writer.js';
import type { MemoryHitRecord } from '../ports/memory-index.js';

describe('extractClaims', () => {
  it.each([
    ['I live in Paris with my partner.', 'residence', 'self', 'paris'],
    ["We've just moved to Berlin!", 'residence', 'self', 'berlin'],
    ['I work at Acme Corp as a designer.', 'employer', 'self', 'acme corp'],
    ['I started a new job at Globex last week.', 'employer', 'self', 'globex'],
    ['My phone number is 555-0100.', 'np:phone number', 'self', '555-0100'],
    ['The meeting is on Tuesday at 3pm.', 'np:meeting', 'shared', 'tuesday at 3pm'],
    ['The price of the basic plan was raised to $12 a month.', 'np:price of the basic plan', 'shared', '$12 month'],
    ['I switched to Firefox as my browser.', 'uses:browser', 'self', 'firefox'],
  ])('reads %s', (text, key, subject, value) => {
    expect(extractClaims(text)).toContainEqual(expect.objectContaining({ key, subject, value }));
  });

  it('claims nothing for questions, hypotheses and plain talk', () => {
    expect(extractClaims('Do you live in Paris?')).toEqual([]);
    expect(extractClaims('If I moved to Berlin I would miss you.')).toEqual([]);
    expect(extractClaims('I am thinking about working at Globex.')).toEqual([]);
    expect(extractClaims('The thing is, I love painting sunsets.')).toEqual([]);
    expect(extractClaims('That sounds lovely, enjoy the trip!')).toEqual([]);
  });

  it('reads "no longer" as a negated claim', () => {
    expect(extractClaims('I no longer work at Acme.')).toEqual([expect.objectContaining({ key: 'employer', value: 'acme', negated: true })]);
  });
});

describe('supersedesText', () => {
  it.each([
    ['I moved to Berlin in March.', 'I live in Paris.'],
    ['I work at Globex now.', 'I work at Acme Corp.'],
    ['I no longer work at Acme.', 'I work at Acme Corp.'],
    ['My new phone number is 555-0199.', 'My phone number is 555-0100.'],
    ['The meeting was moved to Thursday at 10am.', 'The meeting is on Tuesday at 3pm.'],
    ['The price of the basic plan was raised to $12.', 'The price of the basic plan is $10 per month.'],
    ['I switched to Firefox as my browser last month.', 'I use Chrome as my browser.'],
  ])('"%s" replaces "%s"', (next, previous) => {
    expect(supersedesText(next, previous)).toBe(true);
  });

  it.each([
    ['I live in Paris, still.', 'I live in Paris.'],
    ['My son is a soccer player.', 'My son is 5.'],
    ['My daughter is in college.', 'My daughter is a teacher.'],
    ['I love Berlin.', 'I live in Paris.'],
    ['I work at Acme Corp.', 'I no longer work at Acme.'],
    ["I'm currently using a drip coffee maker, a new one.", "I've switched to a darker roast."],
  ])('keeps both: "%s" and "%s"', (next, previous) => {
    expect(supersedesText(next, previous)).toBe(false);
  });
});

describe('defaultMemoryWriter supersessions', () => {
  const turn = (turnIndex: number, text: string, speaker = 'user', timestamp = '2024-05-01T10:00:00.000Z') => ({
    turnIndex,
    speaker,
    text,
    timestamp,
    tags: [],
    source: { kind: 'turn' as const, threadId: 'thread_a', observationId: 'obs_new', turnIndex },
  });
  const old = (id: string, text: string, speaker: string, occurredAt = '2024-01-01T10:00:00.000Z'): MemoryHitRecord =>
    ({ id, organizationId: 'org', agentId: 'agent', text, keywords: '', speaker, occurredAt, createdAt: occurredAt, source: { kind: 'turn', threadId: 'thread_a', observationId: 'obs_old', turnIndex: 0 } }) as MemoryHitRecord;

  it('supersedes the same speaker\'s older value found through searchSimilar', async () => {
    const lookups: string[] = [];
    const stored = [old('mem_paris', 'I live in Paris.', 'user'), old('mem_other', 'I live in Rome.', 'assistant')];
    const result = await defaultMemoryWriter().write({
      agentId: 'agent',
      turns: [turn(0, 'Hello there!'), turn(1, 'I moved to Berlin in March.')],
      searchSimilar: async (text) => {
        lookups.push(text);
        return stored;
      },
    });
    expect(result.supersedes).toEqual([{ old: { id: 'mem_paris' }, by: { turnIndex: 1, piece: 0 } }]);
    // Only a memory that states a fact looks anything up.
    expect(lookups).toEqual(['I moved to Berlin in March.']);
  });

  it('supersedes an earlier memory of the same batch and never a later one', async () => {
    const result = await defaultMemoryWriter().write({
      agentId: 'agent',
      turns: [turn(0, 'My phone number is 555-0100.'), turn(1, 'Got it.', 'assistant'), turn(2, 'My new phone number is 555-0199.')],
      searchSimilar: async () => [old('mem_future', 'My phone number is 555-0000.', 'user', '2030-01-01T00:00:00.000Z')],
    });
    expect(result.supersedes).toEqual([{ old: { turnIndex: 0, piece: 0 }, by: { turnIndex: 2, piece: 0 } }]);
  });

  it('returns no supersessions when nothing changed', async () => {
    const result = await defaultMemoryWriter().write({ agentId: 'agent', turns: [turn(0, 'I live in Paris.')], searchSimilar: async () => [old('mem_paris', 'I live in Paris!', 'user')] });
    expect(result.supersedes).toBeUndefined();
  });
});
