// OCR accuracy and speed on a real scan: renders every page of shared/fixtures/docs/linn.pdf (a
// 300 dpi, two-column, image-only scan), recognises it with tesseractOcr(), and scores the text
// against the reference transcript linn.txt.
//
//   npx tsx bench/ocr-accuracy.ts [--scale 4.1667] [--pdf path] [--reference path]
//
// Character error rate (CER) = Levenshtein distance between the normalised OCR text and the
// normalised reference, divided by the reference's length in code points. Normalisation: NFKC,
// every whitespace run becomes one space, ends trimmed; punctuation is kept. `cer` keeps letter
// case; `cerIgnoringCase` lower-cases both sides first. Pages are joined with a newline before
// scoring because the reference covers the whole document.
//
// Timings: `renderSecondsPerPage` is pdf-parse's getScreenshot, `workerStartSeconds` is the first
// worker's start (measured on a tiny image, so page times are warm), `ocrSecondsPerPage` is the
// mean wall time of `recognize` per page, run one page at a time.
//
// Prints one JSON line, then a short table.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { characterErrorRate, normalizeForScoring, renderPdfPages, renderTextImage } from '@memory-agents/core/testing';
import { tesseractOcr } from '@memory-agents/ocr-tesseract';

const docs = new URL('../../shared/fixtures/docs/', import.meta.url);
const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: String(300 / 72) },
    pdf: { type: 'string', default: fileURLToPath(new URL('linn.pdf', docs)) },
    reference: { type: 'string', default: fileURLToPath(new URL('linn.txt', docs)) },
  },
});
const scale = Number(values.scale);
if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${values.scale}`);

const seconds = (since: number) => (performance.now() - since) / 1000;

const pdf = new Uint8Array(await readFile(values.pdf));
const reference = await readFile(values.reference, 'utf8');

let started = performance.now();
const pages = await renderPdfPages(pdf, { scale });
const renderSeconds = seconds(started);

const ocr = tesseractOcr();
const perPage: Array<{ page: number; width: number; height: number; seconds: number; confidence: number }> = [];
const texts: string[] = [];
let workerStartSeconds = 0;
try {
  started = performance.now();
  await ocr.recognize({ image: await renderTextImage({ lines: ['warm up'] }) });
  workerStartSeconds = seconds(started);

  for (const page of pages) {
    started = performance.now();
    const { text, confidence } = await ocr.recognize({ image: page.image });
    perPage.push({
      page: page.pageNumber,
      width: page.width,
      height: Math.round(page.height),
      seconds: seconds(started),
      confidence,
    });
    texts.push(text);
  }
} finally {
  await ocr.close?.();
}

const hypothesis = texts.join('\n');
const ocrSeconds = perPage.reduce((sum, page) => sum + page.seconds, 0);
const result = {
  bench: 'ocr-accuracy',
  document: path.basename(values.pdf),
  pages: pages.length,
  scale: Number(scale.toFixed(4)),
  dpi: Math.round(scale * 72),
  referenceChars: Array.from(normalizeForScoring(reference)).length,
  cer: round(characterErrorRate(hypothesis, reference)),
  cerIgnoringCase: round(characterErrorRate(hypothesis, reference, { isCaseSensitive: false })),
  meanConfidence: round(perPage.reduce((sum, page) => sum + page.confidence, 0) / Math.max(1, perPage.length)),
  ocrSecondsPerPage: round(ocrSeconds / Math.max(1, pages.length)),
  renderSecondsPerPage: round(renderSeconds / Math.max(1, pages.length)),
  workerStartSeconds: round(workerStartSeconds),
};
console.log(JSON.stringify(result));
console.log();
console.log('page  size         ocr s  confidence');
for (const page of perPage) {
  console.log(
    `${String(page.page).padEnd(5)} ${`${page.width}x${page.height}`.padEnd(12)} ${page.seconds.toFixed(2).padStart(5)}  ${String(page.confidence).padStart(10)}`,
  );
}
console.log();
console.log(`CER ${(result.cer * 100).toFixed(2)} % (ignoring case ${(result.cerIgnoringCase * 100).toFixed(2)} %) over ${result.referenceChars} reference chars`);
console.log(`${result.ocrSecondsPerPage.toFixed(2)} s/page OCR at ${result.dpi} dpi, +${result.renderSecondsPerPage.toFixed(2)} s/page render, worker start ${result.workerStartSeconds.toFixed(2)} s`);

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
