import { describe, expect, it } from 'vitest';
import type { MemoryHitRecord } from '../ports/memory-index.js';
import { preferNewer, type RetrievedItem } from './retrieve.js';

const item = (id: string, text: string, validFrom: string, score: number, speaker = 'user', threadId = 'thread_a'): RetrievedItem => ({
  score,
  record: {
    id,
    text,
    speaker,
    validFrom,
    occurredAt: validFrom,
    createdAt: validFrom,
    source: { kind: 'turn', threadId, observationId: `obs_${id}`, turnIndex: 0 },
  } as MemoryHitRecord,
});

describe('preferNewer', () => {
  it('moves a newer statement of the same attribute just ahead of the older one', () => {
    const ranked = [item('old', 'I live in Paris.', '2024-01-01T00:00:00Z', 1), item('other', 'I like jazz.', '2024-02-01T00:00:00Z', 0.9), item('new', 'I moved to Berlin.', '2024-03-01T00:00:00Z', 0.6)];
    expect(preferNewer(ranked).map((entry) => entry.record.id)).toEqual(['new', 'old', 'other']);
  });

  it('moves a newer near-duplicate of the same speaker ahead', () => {
    const ranked = [item('old', 'We adopted a puppy called Rex last spring.', '2024-01-01T00:00:00Z', 1), item('new', 'Our puppy Rex turned one last spring.', '2024-05-01T00:00:00Z', 0.8)];
    expect(preferNewer(ranked).map((entry) => entry.record.id)).toEqual(['new', 'old']);
  });

  it('keeps the order for another speaker, an older item, a much weaker one or an unrelated one', () => {
    const older = item('a', 'I live in Paris.', '2024-03-01T00:00:00Z', 1);
    expect(preferNewer([older, item('b', 'I moved to Berlin.', '2024-04-01T00:00:00Z', 0.9, 'assistant')]).map((entry) => entry.record.id)).toEqual(['a', 'b']);
    expect(preferNewer([older, item('b', 'I moved to Berlin.', '2024-01-01T00:00:00Z', 0.9)]).map((entry) => entry.record.id)).toEqual(['a', 'b']);
    expect(preferNewer([older, item('b', 'I moved to Berlin.', '2024-04-01T00:00:00Z', 0.4)]).map((entry) => entry.record.id)).toEqual(['a', 'b']);
    expect(preferNewer([older, item('b', 'I bought a red bicycle.', '2024-04-01T00:00:00Z', 0.9)]).map((entry) => entry.record.id)).toEqual(['a', 'b']);
  });

  it('by meaning: a newer memory of the same speaker that answers the query about as well moves ahead, whatever its words', () => {
    const old = item('old', 'At work I report to Priya Shah.', '2024-01-01T00:00:00Z', 2);
    const next = item('new', 'After the reorg my boss is Tom Becker.', '2024-04-01T00:00:00Z', 1.7);
    const filler = item('filler', 'Oh, and something changed.', '2024-04-01T00:00:00Z', 1.9);
    // Without cosines: no shared words, no shared attribute, order kept.
    expect(preferNewer([old, filler, next]).map((entry) => entry.record.id)).toEqual(['old', 'filler', 'new']);
    // Both answer by meaning (0.41 >= 0.7 x 0.54); the filler does not (0.06), so it never moves ahead.
    const cosines = new Map([['old', 0.41], ['new', 0.54], ['filler', 0.06]]);
    expect(preferNewer([old, filler, next], cosines).map((entry) => entry.record.id)).toEqual(['new', 'old', 'filler']);
  });

  it('by meaning: not for another speaker, an older memory, a much weaker one, or one well below the best cosine', () => {
    const old = item('old', 'At work I report to Priya Shah.', '2024-01-01T00:00:00Z', 2);
    const cosines = new Map([['old', 0.5], ['new', 0.5]]);
    const order = (next: RetrievedItem, map = cosines) => preferNewer([old, next], map).map((entry) => entry.record.id);
    expect(order(item('new', 'My boss is Tom Becker.', '2024-04-01T00:00:00Z', 1.7, 'assistant'))).toEqual(['old', 'new']);
    expect(order(item('new', 'My boss is Tom Becker.', '2023-04-01T00:00:00Z', 1.7))).toEqual(['old', 'new']);
    expect(order(item('new', 'My boss is Tom Becker.', '2024-04-01T00:00:00Z', 0.9))).toEqual(['old', 'new']);
    expect(order(item('new', 'My boss is Tom Becker.', '2024-04-01T00:00:00Z', 1.7), new Map([['old', 0.5], ['new', 0.34]]))).toEqual(['old', 'new']);
    // At the edge: exactly 0.7 of the best moves.
    expect(order(item('new', 'My boss is Tom Becker.', '2024-04-01T00:00:00Z', 1.7), new Map([['old', 0.5], ['new', 0.35]]))).toEqual(['new', 'old']);
  });
  describe('a stated change, with a sentence model (cosines to the query by id)', () => {
    const old = item('old', 'We adopted a grey kitten and named her Luna.', '2024-01-01T00:00:00Z', 2.3);
    const filler = item('filler', 'Thanks for telling me.', '2024-04-01T00:00:00Z', 1.2, 'assistant');
    const cosines = (extra: Record<string, number>) => new Map(Object.entries({ old: 0.68, filler: 0.1, ...extra }));

    it('moves a newer memory that says something changed ahead, however much lower it scored', () => {
      const next = item('new', 'Everyone at home calls the kitten Pepper these days.', '2024-04-01T00:00:00Z', 0.9);
      expect(preferNewer([old, filler, next], cosines({ new: 0.54 })).map((entry) => entry.record.id)).toEqual(['new', 'old', 'filler']);
    });

    it('counts a new number of the same thing as a stated change', () => {
      const due = item('old', 'The grant proposal is due on June 2.', '2024-01-01T00:00:00Z', 2.3);
      const moved = item('new', 'The funder gave us more time, the proposal deadline is June 16.', '2024-04-01T00:00:00Z', 0.8);
      expect(preferNewer([due, filler, moved], new Map([['old', 0.88], ['new', 0.62], ['filler', 0.1]])).map((entry) => entry.record.id)).toEqual(['new', 'old', 'filler']);
      // The same number again, or no shared word, is no new value.
      const same = item('new', 'The proposal deadline is still June 2, the funder said.', '2024-04-01T00:00:00Z', 0.8);
      expect(preferNewer([due, filler, same], new Map([['old', 0.88], ['new', 0.62], ['filler', 0.1]])).map((entry) => entry.record.id)).toEqual(['old', 'filler', 'new']);
      const unrelated = item('new', 'My nephew turns 16 on Friday.', '2024-04-01T00:00:00Z', 0.8);
      expect(preferNewer([due, filler, unrelated], new Map([['old', 0.88], ['new', 0.62], ['filler', 0.1]])).map((entry) => entry.record.id)).toEqual(['old', 'filler', 'new']);
    });

    it('keeps the order when the newer one does not answer the query, is another speaker’s, is older, or there is no model', () => {
      const next = item('new', 'Everyone at home calls the kitten Pepper these days.', '2024-04-01T00:00:00Z', 0.9);
      // Below 0.4 of the best cosine: not about what was asked.
      expect(preferNewer([old, filler, next], cosines({ new: 0.2 })).map((entry) => entry.record.id)).toEqual(['old', 'filler', 'new']);
      const theirs = item('new', 'Everyone at home calls the kitten Pepper these days.', '2024-04-01T00:00:00Z', 0.9, 'assistant');
      expect(preferNewer([old, filler, theirs], cosines({ new: 0.54 })).map((entry) => entry.record.id)).toEqual(['old', 'filler', 'new']);
      const earlier = item('new', 'Everyone at home calls the kitten Pepper these days.', '2023-12-01T00:00:00Z', 0.9);
      expect(preferNewer([old, filler, earlier], cosines({ new: 0.54 })).map((entry) => entry.record.id)).toEqual(['old', 'filler', 'new']);
      expect(preferNewer([old, filler, next]).map((entry) => entry.record.id)).toEqual(['old', 'filler', 'new']);
      // No change said and no new number: not a stated change.
      const plain = item('new', 'The kitten sleeps on the sofa.', '2024-04-01T00:00:00Z', 0.9);
      expect(preferNewer([old, filler, plain], cosines({ new: 0.54 })).map((entry) => entry.record.id)).toEqual(['old', 'filler', 'new']);
    });
  });
});
