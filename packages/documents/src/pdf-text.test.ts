import { describe, expect, it } from 'vitest';
import { captionFor, joinLines, pageTextToBlocks, stripRunningLines } from './pdf-text.js';

describe('pdf text helpers', () => {
  it('removes running headers and page-number footers seen on half the pages or more', () => {
    const pages = [1, 2, 3, 4].map((number) => `ACME Corp \u2014 Confidential\nBody of page ${number} is unique: ${'x'.repeat(number)}.\nPage ${number} of 4`);
    expect(stripRunningLines(pages)).toEqual([1, 2, 3, 4].map((number) => `Body of page ${number} is unique: ${'x'.repeat(number)}.`));
    // Two pages are too few to tell a running line from content.
    expect(stripRunningLines(pages.slice(0, 2))).toEqual(pages.slice(0, 2));
  });

  it('joins wrapped lines and repairs words broken at a hyphen', () => {
    expect(joinLines(['The trace moni-', 'tor records', 'Trace-', 'Monkey'])).toBe('The trace monitor records Trace-Monkey');
  });

  it('splits page text into paragraphs, numbered headings and captions', () => {
    const text = [
      '2. Overview',
      'A long line of body text that goes on and on to set the typical length here.',
      'Another long line of body text that continues the same paragraph further on.',
      'Short end of it.',
      'Figure 3. A caption that starts a paragraph.',
    ].join('\n');
    expect(pageTextToBlocks(text, 5)).toEqual([
      { kind: 'heading', text: '2. Overview', page: 5, level: 1 },
      {
        kind: 'paragraph',
        text: 'A long line of body text that goes on and on to set the typical length here. Another long line of body text that continues the same paragraph further on. Short end of it.',
        page: 5,
      },
      { kind: 'paragraph', text: 'Figure 3. A caption that starts a paragraph.', page: 5 },
    ]);
  });

  it('reads a caption up to the end of its first sentence, past abbreviations', () => {
    const page = 'text\nFigure 10. Speedup vs. a baseline interpreter for our\ncompiler. More words here.\nnext';
    expect(captionFor(page, 'Figure 10')).toBe('Figure 10. Speedup vs. a baseline interpreter for our compiler.');
    expect(captionFor(page, 'Figure 11')).toBe('');
  });
});
