// The HTML reader before and after htmlparser2 replaced the hand-written parser (issue 20): the same
// extractor (`htmlToBlocks`) on both trees, compared on the HTML fixtures.
//
//   npx tsx packages/documents/bench/html-parser-compare.ts [--base 69058c5] [--runs 20]
//
// `--base` is a commit whose packages/documents/src/html-parser.ts is the hand-written parser; its
// html-parser.ts and html-to-blocks.ts are copied to packages/documents/bench/.scratch/html-base/ and imported from there.
// Prints: main-content recall/precision on wikipedia-source.html against wikipedia-expected.html
// (words, as html-to-blocks.test.ts scores it), block equality on every fixture (the Wikipedia
// pair, the HTML mammoth makes of tables.docx, the page in html-to-blocks.test.ts, 2000 random
// malformed snippets), entity decoding, and htmlToBlocks time on wikipedia-source.html with base and
// current alternated (median of 5 rounds of --runs calls each, after one warm-up round).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import mammoth from 'mammoth';
import type { DocumentBlock } from '@memory-agents/core/adapter';
import { htmlToBlocks as currentBlocks, type HtmlToBlocksOptions } from '../src/html-to-blocks.js';

const { values } = parseArgs({ options: { base: { type: 'string', default: '69058c5' }, runs: { type: 'string', default: '20' } } });
const scratch = new URL('./.scratch/html-base/', import.meta.url);
mkdirSync(scratch, { recursive: true });
for (const file of ['html-parser.ts', 'html-to-blocks.ts']) {
  const source = execFileSync('git', ['show', `${values.base}:packages/documents/src/${file}`], { encoding: 'utf8' });
  writeFileSync(new URL(file, scratch), source);
}
type Reader = (html: string, options?: HtmlToBlocksOptions) => DocumentBlock[];
const baseBlocks: Reader = (await import(new URL('html-to-blocks.ts', scratch).href)).htmlToBlocks;
const readers: Array<[string, Reader]> = [['base', baseBlocks], ['current', currentBlocks]];

const shared = (name: string) => readFileSync(new URL(`../../../../shared/fixtures/docs/${name}`, import.meta.url));
const words = (value: string): string[] => value.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const textOf = (blocks: DocumentBlock[]) => blocks.map((block) => block.text).join('\n');
const percent = (value: number) => `${(value * 100).toFixed(2)}%`;

function overlap(ours: string[], wanted: string[]): { recall: number; precision: number } {
  const counts = new Map<string, number>();
  for (const word of ours) counts.set(word, (counts.get(word) ?? 0) + 1);
  let hit = 0;
  for (const word of wanted) {
    const left = counts.get(word) ?? 0;
    if (left > 0) {
      hit++;
      counts.set(word, left - 1);
    }
  }
  return { recall: hit / wanted.length, precision: hit / ours.length };
}

const source = shared('wikipedia-source.html').toString('utf8');
const expected = shared('wikipedia-expected.html').toString('utf8');
const docx = (await mammoth.convertToHtml({ buffer: shared('tables.docx') })).value;
const testPage = /const html = `([\s\S]*?)`;/.exec(readFileSync(new URL('../src/html-to-blocks.test.ts', import.meta.url), 'utf8'))?.[1] ?? '';

console.log(`base ${values.base} (hand-written parser) vs current (htmlparser2)`);
for (const [label, read] of readers) {
  const main = read(source);
  const score = overlap(words(textOf(main)), words(textOf(read(expected, { mainContentOnly: false }))));
  console.log(`${label}: wikipedia main content ${main.length} blocks, ${words(textOf(main)).length} words, recall ${percent(score.recall)}, precision ${percent(score.precision)}`);
}
const fixtures: Array<[string, string, HtmlToBlocksOptions]> = [
  ['wikipedia-source.html (main content)', source, {}],
  ['wikipedia-expected.html (all)', expected, { mainContentOnly: false }],
  ['tables.docx via mammoth (all)', docx, { mainContentOnly: false }],
  ['html-to-blocks.test.ts page', testPage, {}],
];
for (const [name, html, options] of fixtures) {
  const same = JSON.stringify(baseBlocks(html, options)) === JSON.stringify(currentBlocks(html, options));
  console.log(`${name}: blocks ${same ? 'identical' : 'DIFFER'}`);
}
const piece = fc.constantFrom('<p>', '</p>', '<div class="menu">', '</div>', '<ul><li>', '</li>', '<table><tr><td>', '</td>', '<pre>', '</pre>', '<h2>', '</h2>', '<!--', '-->', '<script>', '</script>', '<br>', '&amp;', '&#x1F600;', '&bogus;', 'text, with commas ', 'word ', '<', '>', '"', '\n', '<a href="x">', '</a>', '<nav>', '</nav>');
const snippets = fc.sample(fc.array(piece, { maxLength: 200, size: 'max' }), { numRuns: 2000, seed: 20 }).map((pieces) => pieces.join(''));
let sameBlocks = 0;
let sameWords = 0;
for (const html of snippets) {
  const [a, b] = [baseBlocks(html), currentBlocks(html)];
  if (JSON.stringify(a) === JSON.stringify(b)) sameBlocks++;
  if (words(textOf(a)).join(' ') === words(textOf(b)).join(' ')) sameWords++;
}
console.log(`random malformed snippets (2000, seed 20): identical blocks ${sameBlocks}, identical words ${sameWords}`);
const entities = '<p>Caf&eacute; &hearts; &Alpha;&beta; &lowast; &check; &NotEqual; &amp &copy 2024</p>';
for (const [label, read] of readers) console.log(`${label} entities: ${JSON.stringify(read(entities, { mainContentOnly: false })[0]?.text)}`);

const runs = Number(values.runs);
const times = new Map<string, number[]>(readers.map(([label]) => [label, []]));
for (let round = 0; round <= 5; round++) {
  for (const [label, read] of readers) {
    const start = performance.now();
    for (let index = 0; index < runs; index++) read(source);
    if (round > 0) times.get(label)?.push((performance.now() - start) / runs);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const [baseMs, currentMs] = readers.map(([label]) => median(times.get(label) ?? []));
console.log(`htmlToBlocks(wikipedia-source.html, 244 kB): base ${baseMs?.toFixed(1)} ms, current ${currentMs?.toFixed(1)} ms, current/base ${((currentMs ?? NaN) / (baseMs ?? NaN)).toFixed(2)}`);
