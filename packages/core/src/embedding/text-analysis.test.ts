import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze, stem, tokenize } from './text-analysis.js';

describe('tokenize', () => {
  it('lower-cases, splits on non-word characters and drops apostrophes', () => {
    expect(tokenize("John's running-shoes! 2023-05-08, 50% ÉTÉ 记忆")).toEqual(['johns', 'running', 'shoes', '2023', '05', '08', '50', 'été', '记忆']);
    expect(tokenize('')).toEqual([]);
  });
});

describe('stem', () => {
  it('maps common inflections to the same key', () => {
    const groups = [
      ['run', 'running', 'runs'],
      ['shoe', 'shoes'],
      ['story', 'stories'],
      ['hope', 'hoped', 'hopes', 'hoping'],
      ['paint', 'painted', 'painting', 'paints'],
      ['adopt', 'adopted', 'adopting'],
      ['class', 'classes'],
    ];
    for (const group of groups) expect(new Set(group.map(stem)).size, group.join()).toBe(1);
  });

  it('leaves short words and tokens with digits alone', () => {
    expect(stem('bus')).toBe('bus');
    expect(stem('2023s')).toBe('2023s');
    expect(stem('mp3')).toBe('mp3');
  });

  it('is idempotent enough to be applied to query and document alike', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{1,12}$/), (word) => {
        expect(typeof stem(word)).toBe('string');
        expect(stem(word).length).toBeGreaterThan(0);
      }),
    );
  });
});

describe('analyze', () => {
  it('drops stop words and one-letter tokens, keeps digits, stems the rest', () => {
    expect(analyze('What did Caroline do on 8 May 2023? She was running!')).toEqual(['carolin', '8', 'may', '2023', 'run']);
    expect(analyze('who are you')).toEqual([]);
  });
});
