import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markdownToBlocks } from './markdown-to-blocks.js';
import { codeToBlocks, csvToBlocks, plainTextToBlocks } from './text-to-blocks.js';

describe('markdownToBlocks', () => {
  it('maps headings, code fences, lists, tables and paragraphs', () => {
    const source = [
      '---',
      'title: Doc',
      '---',
      '# Title',
      '',
      'Intro line one',
      'line two.',
      '',
      'Setext',
      '------',
      '- a',
      '- b',
      '  continued',
      '',
      '```ts',
      'const x = 1;',
      '```',
      '',
      '| h1 | h2 |',
      '|----|----|',
      '| c1 | c2 |',
      '',
      '> quoted',
      '### Deep ###',
    ].join('\r\n');
    expect(markdownToBlocks(source)).toEqual([
      { kind: 'code', text: 'title: Doc', page: null, language: 'yaml' },
      { kind: 'heading', text: 'Title', page: null, level: 1 },
      { kind: 'paragraph', text: 'Intro line one\nline two.', page: null },
      { kind: 'heading', text: 'Setext', page: null, level: 2 },
      { kind: 'list', text: '- a\n- b\n  continued', page: null },
      { kind: 'code', text: 'const x = 1;', page: null, language: 'ts' },
      { kind: 'table', text: 'h1 | h2\nc1 | c2', page: null },
      { kind: 'paragraph', text: 'quoted', page: null },
      { kind: 'heading', text: 'Deep', page: null, level: 3 },
    ]);
  });
});

describe('text converters', () => {
  it('splits plain text at blank lines and keeps code and CSV whole', () => {
    expect(plainTextToBlocks('\uFEFFone\r\ntwo\r\n\r\n\r\nthree  \n')).toEqual([
      { kind: 'paragraph', text: 'one\ntwo', page: null },
      { kind: 'paragraph', text: 'three', page: null },
    ]);
    expect(codeToBlocks('def f():\n    return 1\n\n\n', 'python')).toEqual([{ kind: 'code', text: 'def f():\n    return 1', page: null, language: 'python' }]);
    expect(csvToBlocks('a,b\r\n1,2\r\n')).toEqual([{ kind: 'table', text: 'a,b\n1,2', page: null }]);
    expect(plainTextToBlocks(' \n\t\n')).toEqual([]);
  });
});

describe('markdownToBlocks under random input', () => {
  const markdownPiece = fc.constantFrom('# ', '## ', '```', '~~~', '- ', '1. ', '> ', '| a | b |', '|---|---|', '---', '===', 'text ', '\n', '\n\n', '  ', '[x](y)', '**b**');

  it('turns any Markdown-ish text into non-empty blocks without throwing', () => {
    // Found by this property: a pipe table of rule lines only gave an empty table block.
    expect(markdownToBlocks('|---|---|\n|---|---|')).toEqual([]);
    expect(markdownToBlocks('| a | b |\n|---|---|\n|---|---|')).toEqual([{ kind: 'table', text: 'a | b', page: null }]);
    fc.assert(
      fc.property(fc.array(markdownPiece, { maxLength: 200, size: 'max' }), (pieces) => {
        for (const block of markdownToBlocks(pieces.join(''))) expect(block.text.trim()).not.toBe('');
      }),
      { numRuns: 200 },
    );
  });
});
