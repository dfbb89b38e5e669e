import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DocumentBlock } from '../ports/document-converter.js';
import { isServiceError } from '../errors/index.js';
import { type ChunkStrategy, chunkDocument, resolveChunkOptions } from './chunk-document.js';
import { countWords } from '../credits/pricing.js';
import { documentText } from './document-text.js';

const STRATEGIES: ChunkStrategy[] = ['auto', 'length', 'sentence', 'code', 'structure'];

const unit = fc.constantFrom('a', 'b', 'c', 'word', ' ', ' ', '\n', '\n\n', '.', '. ', '! ', '? ', ',', 'é', '😀', '\t', 'function f() {', '}', '\ndef g():\n', 'class X:', '#');
const text = fc.string({ unit, minLength: 1, maxLength: 1500, size: 'max' }).filter((value) => value.length > 0);
const block: fc.Arbitrary<DocumentBlock> = fc.record({
  kind: fc.constantFrom('heading', 'paragraph', 'code', 'table', 'list', 'figure'),
  text,
  page: fc.option(fc.integer({ min: 1, max: 50 }), { nil: null }),
}).map((value) => (value.kind === 'heading' ? { ...value, level: 1 + (value.text.length % 6) } : value));
const blocks = fc.array(block, { minLength: 0, maxLength: 12, size: 'medium' });
const sizes = fc.integer({ min: 200, max: 4000 }).chain((maxChars) =>
  fc.record({ maxChars: fc.constant(maxChars), overlapChars: fc.integer({ min: 0, max: Math.ceil(maxChars / 2) - 1 }) }),
);

/** The last `count` UTF-16 units of `value`, one fewer when that would start inside a surrogate pair. */
function tailOf(value: string, count: number): string {
  let start = Math.max(0, value.length - count);
  const code = value.charCodeAt(start);
  if (start > 0 && code >= 0xdc00 && code <= 0xdfff) start++;
  return value.slice(start);
}

describe('chunkDocument', () => {
  it('never makes a piece longer than maxChars, overlap included, for every strategy', () => {
    fc.assert(
      fc.property(blocks, sizes, fc.constantFrom(...STRATEGIES), (input, { maxChars, overlapChars }, strategy) => {
        for (const piece of chunkDocument(input, { strategy, maxChars, overlapChars })) {
          expect(piece.text.length).toBeLessThanOrEqual(maxChars);
          expect(piece.text.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is lossless for length and auto without overlap: pieces concatenate to documentText', () => {
    fc.assert(
      fc.property(blocks, fc.integer({ min: 200, max: 4000 }), fc.constantFrom<ChunkStrategy>('auto', 'length'), (input, maxChars, strategy) => {
        const pieces = chunkDocument(input, { strategy, maxChars, overlapChars: 0 });
        expect(pieces.map((piece) => piece.text).join('')).toBe(documentText(input));
      }),
      { numRuns: 300 },
    );
  });

  it('starts each piece after the first with the last overlapChars characters of the previous new text', () => {
    fc.assert(
      fc.property(blocks, sizes, fc.constantFrom(...STRATEGIES), (input, { maxChars, overlapChars }, strategy) => {
        const pieces = chunkDocument(input, { strategy, maxChars, overlapChars });
        const newTexts: string[] = [];
        pieces.forEach((piece, index) => {
          const previous = newTexts[index - 1];
          const tail = previous === undefined || overlapChars === 0 ? '' : tailOf(previous, overlapChars);
          expect(piece.text.startsWith(tail)).toBe(true);
          newTexts.push(piece.text.slice(tail.length));
        });
        if (strategy === 'auto' || strategy === 'length') expect(newTexts.join('')).toBe(documentText(input));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps all non-whitespace text in order for every strategy without overlap', () => {
    fc.assert(
      fc.property(blocks, fc.integer({ min: 200, max: 4000 }), fc.constantFrom(...STRATEGIES), (input, maxChars, strategy) => {
        const pieces = chunkDocument(input, { strategy, maxChars, overlapChars: 0 });
        const squeeze = (value: string): string => value.replace(/\s+/g, '');
        expect(squeeze(pieces.map((piece) => piece.text).join(''))).toBe(squeeze(documentText(input)));
      }),
      { numRuns: 200 },
    );
  });

  it('is exercised by the generators: many samples need several pieces', () => {
    const samples = fc.sample(blocks, { numRuns: 100, seed: 42 });
    const multi = samples.filter((input) => chunkDocument(input, { strategy: 'length', maxChars: 200, overlapChars: 50 }).length > 3);
    expect(multi.length).toBeGreaterThan(30);
  });

  it('makes auto exactly the length strategy', () => {
    fc.assert(
      fc.property(blocks, sizes, (input, { maxChars, overlapChars }) => {
        expect(chunkDocument(input, { strategy: 'auto', maxChars, overlapChars })).toEqual(chunkDocument(input, { strategy: 'length', maxChars, overlapChars }));
      }),
      { numRuns: 100 },
    );
  });

  it('keeps the pages where each piece starts and ends', () => {
    const input: DocumentBlock[] = [
      { kind: 'paragraph', text: 'a'.repeat(150), page: 1 },
      { kind: 'paragraph', text: 'b'.repeat(150), page: 2 },
      { kind: 'paragraph', text: 'c'.repeat(150), page: 3 },
    ];
    const pieces = chunkDocument(input, { strategy: 'length', maxChars: 200, overlapChars: 0 });
    expect(pieces.map((piece) => [piece.page, piece.pageEnd])).toEqual([
      [1, 2],
      [2, 3],
      [3, 3],
    ]);
    const withOverlap = chunkDocument(input, { strategy: 'length', maxChars: 200, overlapChars: 60 });
    expect(withOverlap[1]?.page).toBe(1);
    expect(chunkDocument([{ kind: 'paragraph', text: 'x y', page: null }])).toEqual([{ text: 'x y', page: null, pageEnd: null }]);
  });

  it('cuts length pieces at whitespace near the limit rather than inside words', () => {
    const words = Array.from({ length: 400 }, (_, index) => `word${index}`).join(' ');
    const pieces = chunkDocument([{ kind: 'paragraph', text: words, page: null }], { strategy: 'length', maxChars: 500, overlapChars: 0 });
    for (const piece of pieces.slice(0, -1)) {
      expect(piece.text.endsWith(' ')).toBe(true);
      expect(piece.text.length).toBeGreaterThanOrEqual(400);
    }
  });

  it('keeps whole sentences with the sentence strategy and cuts only a sentence longer than the budget', () => {
    const sentences = Array.from({ length: 40 }, (_, index) => `Sentence number ${index} says something short.`);
    const long = `${'x'.repeat(450)}.`;
    const input: DocumentBlock[] = [{ kind: 'paragraph', text: `${sentences.join(' ')} ${long} Tail sentence.`, page: null }];
    const pieces = chunkDocument(input, { strategy: 'sentence', maxChars: 300, overlapChars: 0 });
    for (const piece of pieces) {
      expect(piece.text.length).toBeLessThanOrEqual(300);
      if (!piece.text.includes('xxx')) expect(piece.text).toMatch(/^Sentence|^Tail/);
      if (!piece.text.includes('xxx')) expect(piece.text.trimEnd()).toMatch(/\.$/);
    }
    expect(pieces.filter((piece) => piece.text.includes('xxx')).length).toBe(2);
  });

  it('cuts CJK text at full-width sentence ends', () => {
    const sentence = '\u3053\u308c\u306f\u6587\u3067\u3059'.repeat(10) + '\u3002';
    const pieces = chunkDocument([{ kind: 'paragraph', text: sentence.repeat(20), page: null }], { strategy: 'sentence', maxChars: 200, overlapChars: 0 });
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) expect(piece.text.endsWith('\u3002')).toBe(true);
  });

  it('keeps function and class definitions whole with the code strategy', () => {
    const definitions = Array.from(
      { length: 12 },
      (_, index) => `/** Doc ${index}. */\nexport function handler${index}(input: number): number {\n  const doubled = input * 2;\n\n  return doubled + ${index};\n}\n`,
    );
    const source = `import { x } from './x.js';\n\n${definitions.join('\n')}\nclass Tail {\n  run() {\n    return 1;\n  }\n}\n`;
    const pieces = chunkDocument([{ kind: 'code', text: source, page: null, language: 'typescript' }], { strategy: 'code', maxChars: 400, overlapChars: 0 });
    for (let index = 0; index < 12; index++) {
      const holder = pieces.filter((piece) => piece.text.includes(`handler${index}(`));
      expect(holder).toHaveLength(1);
      expect(holder[0]?.text).toContain(`/** Doc ${index}. */\nexport function handler${index}`);
      expect(holder[0]?.text).toContain(`const doubled = input * 2;\n\n  return doubled + ${index};\n}`);
    }
    expect(pieces.map((piece) => piece.text).join('')).toBe(source);
  });

  it('never splits a definition that fits in one piece with the blank line after it (code strategy, property)', () => {
    const line = fc.constantFrom('  x = x + 1;', '', '  // note', '  if (x) {', '  }', '  return x;');
    const definition = fc.tuple(fc.constantFrom('function', 'class', 'export function', 'def'), fc.array(line, { maxLength: 25, size: 'max' }));
    fc.assert(
      fc.property(fc.array(definition, { minLength: 1, maxLength: 30 }), fc.integer({ min: 200, max: 1200 }), (definitions, maxChars) => {
        const texts = definitions.map(([keyword, body], index) => `${keyword} f${index}() {\n${body.join('\n')}\n}\n`);
        const pieces = chunkDocument([{ kind: 'code', text: texts.join('\n'), page: null }], { strategy: 'code', maxChars, overlapChars: 0 });
        texts.forEach((text) => {
          // A definition's unit runs to the next definition, so it includes the blank line after it.
          if (text.length + 1 <= maxChars) expect(pieces.some((piece) => piece.text.includes(text.trimEnd()))).toBe(true);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('follows sections with the structure strategy and only joins tiny ones', () => {
    const body = (label: string): string => `${label} `.repeat(40).trim();
    const input: DocumentBlock[] = [
      { kind: 'heading', text: 'Guide', page: null, level: 1 },
      { kind: 'heading', text: 'Install', page: null, level: 2 },
      { kind: 'paragraph', text: body('install'), page: null },
      { kind: 'heading', text: 'Configure', page: null, level: 2 },
      { kind: 'paragraph', text: body('configure').slice(0, 300), page: null },
      { kind: 'heading', text: 'Run', page: null, level: 2 },
      { kind: 'paragraph', text: `${body('run')}. ${body('again')}. ${body('more')}.`, page: null },
    ];
    const pieces = chunkDocument(input, { strategy: 'structure', maxChars: 400, overlapChars: 0 });
    expect(pieces[0]?.text.startsWith('# Guide\n\n## Install')).toBe(true);
    expect(pieces[0]?.text).not.toContain('configure');
    expect(pieces[1]?.text.startsWith('## Configure')).toBe(true);
    expect(pieces[1]?.text).not.toContain('## Run');
    expect(pieces[2]?.text.startsWith('## Run')).toBe(true);
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces.slice(2)) expect(piece.text).not.toMatch(/install|configure/);
    for (const piece of pieces) expect(piece.text.trim()).not.toMatch(/^#+ \w+$/);
  });

  it('rejects overlap of half of maxChars or more with a 400 and out-of-range values with a 422', () => {
    const code = (options: Parameters<typeof resolveChunkOptions>[0]): [string, number] | null => {
      try {
        resolveChunkOptions(options);
        return null;
      } catch (error) {
        if (!isServiceError(error)) throw error;
        return [error.code, error.status];
      }
    };
    expect(code({ maxChars: 1000, overlapChars: 500 })).toEqual(['invalid_request', 400]);
    expect(code({ maxChars: 1000, overlapChars: 499 })).toBeNull();
    expect(code({ maxChars: 199 })).toEqual(['invalid_request', 422]);
    expect(code({ maxChars: 4001 })).toEqual(['invalid_request', 422]);
    expect(code({ maxChars: 1000.5 })).toEqual(['invalid_request', 422]);
    expect(code({ overlapChars: -1 })).toEqual(['invalid_request', 422]);
    expect(code({ strategy: 'words' as ChunkStrategy })).toEqual(['invalid_request', 422]);
    expect(resolveChunkOptions()).toEqual({ strategy: 'auto', maxChars: 2000, overlapChars: 200 });
  });
});

describe('countWords', () => {
  it('counts whitespace-separated tokens', () => {
    expect(countWords('')).toBe(0);
    expect(countWords('  one\ttwo\n\nthree  ')).toBe(3);
    expect(countWords('[Figure (page 2): Figure 2. State]')).toBe(6);
  });
});

describe('documentText', () => {
  it('joins blocks with a blank line and writes headings as Markdown', () => {
    expect(
      documentText([
        { kind: 'heading', text: 'Title', page: null, level: 2 },
        { kind: 'paragraph', text: 'Body.', page: null },
      ]),
    ).toBe('## Title\n\nBody.');
  });
});
