import { describe, expect, it } from 'vitest';
import { countWords, isServiceError, type ErrorCode } from '@memory-agents/core';
import { chunkDocument, documentText, type ConvertedDocument } from '@memory-agents/core/adapter';
import { failingOcr, fixture, scriptedOcr, SHARED_DOCS } from './__fixtures__/fixture-path.js';
import { buildDocx, buildPdf, buildZip, circularPagesPdf, docxImage, docxParagraph, textImage, textPng } from './__fixtures__/generated-files.js';
import { convertDocument, inspectDocument } from './convert-document.js';

async function failure(promise: Promise<unknown>): Promise<{ code: ErrorCode; status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isServiceError(error)) return { code: error.code, status: error.status, message: error.message };
    throw error;
  }
  throw new Error('expected the conversion to fail');
}

let tracemonkey: Promise<ConvertedDocument> | undefined;
/** One shared conversion of tracemonkey.pdf (the slowest fixture) for the tests that only read it. */
function convertTracemonkey(): Promise<ConvertedDocument> {
  tracemonkey ??= convertDocument(fixture('tracemonkey.pdf'), { filename: 'tracemonkey.pdf' });
  return tracemonkey;
}

async function scannedPdf(pages: number): Promise<Uint8Array> {
  const jpeg = await textImage(['Invoice 2024-001', 'Total 123.45 EUR']);
  return buildPdf(Array.from({ length: pages }, () => ({ image: { jpeg, pixelWidth: 900, pixelHeight: 220, box: [36, 250, 540, 300] as [number, number, number, number] } })));
}

describe('convertDocument: PDF', () => {
  it.skipIf(!SHARED_DOCS)('reads a born-digital paper page by page, with headings and inline figures', async () => {
    const doc = await convertTracemonkey();
    expect(doc).toMatchObject({ format: 'pdf', mediaType: 'application/pdf', pageCount: 14, ocrPages: [] });
    expect(new Set(doc.blocks.map((block) => block.page))).toEqual(new Set(Array.from({ length: 14 }, (_, index) => index + 1)));
    const text = documentText(doc.blocks);
    expect(text.length).toBeGreaterThan(75_000);
    expect(text).toContain('Trace-based Just-in-Time Type Specialization for Dynamic Languages');
    expect(doc.blocks).toContainEqual({ kind: 'heading', text: '3. Trace Trees', page: 4, level: 1 });
    // Raster and vector figures, each matched with its own caption (sub-figures joined).
    expect(doc.figures.map((figure) => figure.page)).toEqual([2, 6, 6, 7, 7, 10, 11, 13]);
    expect(doc.figures.map((figure) => /^Figure \d+/.exec(figure.caption)?.[0])).toEqual([
      'Figure 2', 'Figure 5', 'Figure 6', 'Figure 8', 'Figure 7', 'Figure 11', 'Figure 10', 'Figure 12',
    ]);
    const diagram = doc.figures[0];
    const chart = doc.figures[6];
    expect(diagram?.caption).toBe('Figure 2. State machine describing the major activities of Trace-Monkey and the conditions that cause transitions to a new activity.');
    expect(chart?.caption).toMatch(/^Figure 10\. Speedup vs\. a baseline JavaScript interpreter/);
    expect(diagram?.ocrText).toBe('');
    expect(Array.from(diagram?.png.subarray(0, 4) ?? [])).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(diagram?.width).toBeGreaterThan(300);
    expect(doc.figuresDropped).toBe(0);
    // Inline: the figure block comes right after the paragraph holding its caption.
    const at = doc.blocks.findIndex((block) => block.kind === 'figure' && block.page === 2);
    expect(doc.blocks[at - 1]?.text.startsWith('Figure 2. State machine')).toBe(true);
    expect(doc.blocks[at]?.text).toBe(
      '[Figure (page 2): Figure 2. State machine describing the major activities of Trace-Monkey and the conditions that cause transitions to a new activity]',
    );
  });

  it.skipIf(!SHARED_DOCS)('reads text inside figures with the OCR port and drops figures over the budget', async () => {
    const ocr = scriptedOcr('Interpret Bytecodes Monitor');
    const doc = await convertDocument(fixture('tracemonkey.pdf'), { filename: 'paper.pdf', ocr, limits: { maxFigures: 1 } });
    expect(doc.figures).toHaveLength(1);
    expect(doc.figuresDropped).toBe(7);
    expect(doc.figures[0]?.ocrText).toBe('Interpret Bytecodes Monitor');
    expect(ocr.calls).toHaveLength(1);
    const figure = doc.blocks.find((block) => block.kind === 'figure');
    expect(figure?.text).toMatch(/^\[Figure \(page 2\): Figure 2\. State machine .*\. Text in figure: Interpret Bytecodes Monitor\]$/);
    expect(doc.blocks.filter((block) => block.kind === 'figure')).toHaveLength(1);
  });

  it.skipIf(!SHARED_DOCS)('OCRs a scanned page when an OCR port is given', async () => {
    const ocr = scriptedOcr('Linn ground truth line one\nline two\n\nSecond paragraph.');
    const doc = await convertDocument(fixture('linn.pdf'), { filename: 'linn.pdf', ocr });
    expect(doc.ocrPages).toEqual([1]);
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'Linn ground truth line one line two', page: 1 },
      { kind: 'paragraph', text: 'Second paragraph.', page: 1 },
    ]);
    expect(doc.figures).toEqual([]);
    expect(ocr.calls).toHaveLength(1);
    expect(Array.from(ocr.calls[0]?.subarray(0, 4) ?? [])).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it.skipIf(!SHARED_DOCS)('reports scanned pages cheaply with inspectDocument', async () => {
    expect(await inspectDocument(fixture('linn.pdf'), 'linn.pdf')).toEqual({ format: 'pdf', mediaType: 'application/pdf', pageCount: 1, pagesNeedingOcr: [1] });
    expect(await inspectDocument(fixture('tracemonkey.pdf'), 'x.pdf')).toMatchObject({ pageCount: 14, pagesNeedingOcr: [] });
    expect(await inspectDocument(new TextEncoder().encode('# hi'), 'a.md')).toEqual({ format: 'markdown', mediaType: 'text/markdown', pageCount: null, pagesNeedingOcr: [] });
    expect((await failure(inspectDocument(fixture('issue6010_1.pdf'), 'x.pdf'))).code).toBe('encrypted_document');
  });

  it.skipIf(!SHARED_DOCS)('treats a text layer of unmapped glyphs as needing OCR', async () => {
    const inspection = await inspectDocument(fixture('TAMReview.pdf'), 'tam.pdf');
    expect(inspection.pageCount).toBe(23);
    expect(inspection.pagesNeedingOcr.length).toBeGreaterThan(15);
    expect(inspection.pagesNeedingOcr).not.toContain(1);
  });

  it('OCRs a generated image-only PDF and keeps page numbers', async () => {
    const ocr = scriptedOcr((call) => `Scanned page text number ${call}.`);
    const doc = await convertDocument(await scannedPdf(2), { filename: 'scan.pdf', ocr });
    expect(doc.ocrPages).toEqual([1, 2]);
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'Scanned page text number 1.', page: 1 },
      { kind: 'paragraph', text: 'Scanned page text number 2.', page: 2 },
    ]);
  });

  it('reads a damaged but recoverable PDF (broken cross-reference table)', async () => {
    const intact = buildPdf([{ text: ['Recovered text survives a broken xref.'] }]);
    const broken = new TextDecoder('latin1').decode(intact).replace(/startxref\n\d+/, 'startxref\n999999').replace(/0000000\d\d\d 00000 n/g, '0000000001 00000 n');
    expect(broken).toContain('startxref\n999999');
    expect(broken).not.toMatch(/00000000[1-9]\d 00000 n/);
    const bytes = Uint8Array.from(broken, (char) => char.charCodeAt(0));
    const doc = await convertDocument(bytes, { filename: 'broken.pdf' });
    expect(doc.blocks).toEqual([{ kind: 'paragraph', text: 'Recovered text survives a broken xref.', page: 1 }]);
  });

  it('drops running headers and footers from PDF pages', async () => {
    const bodies = ['Revenue grew in the north.', 'Costs fell in the south.', 'Hiring paused in March.', 'Outlook stays positive.'];
    const pages = bodies.map((body, index) => ({ text: ['ACME Quarterly Report', body, `Page ${index + 1}`] }));
    const doc = await convertDocument(buildPdf(pages), { filename: 'report.pdf' });
    expect(doc.blocks.map((block) => block.text)).toEqual(bodies);
    expect(doc.blocks.map((block) => block.page)).toEqual([1, 2, 3, 4]);
  });

  it.skipIf(!SHARED_DOCS)('maps every PDF failure to its document code', async () => {
    const scan3 = await scannedPdf(3);
    const cases: Array<[string, () => Promise<ConvertedDocument>, ErrorCode]> = [
      ['user password', () => convertDocument(fixture('issue6010_1.pdf'), { filename: 'a.pdf' }), 'encrypted_document'],
      ['owner password only, empty page', () => convertDocument(fixture('empty_protected.pdf'), { filename: 'a.pdf' }), 'empty_document'],
      ['corrupt', () => convertDocument(fixture('bug1020226.pdf'), { filename: 'a.pdf' }), 'malformed_document'],
      ['header and EOF only', () => convertDocument(fixture('invalid.pdf'), { filename: 'a.pdf' }), 'malformed_document'],
      ['circular page tree', () => convertDocument(circularPagesPdf(), { filename: 'a.pdf' }), 'ingestion_failed'],
      ['scan without OCR', () => convertDocument(fixture('linn.pdf'), { filename: 'a.pdf' }), 'document_needs_ocr'],
      ['OCR engine fails', () => convertDocument(fixture('linn.pdf'), { filename: 'a.pdf', ocr: failingOcr() }), 'ocr_failed'],
      ['too many scanned pages', () => convertDocument(scan3, { filename: 'a.pdf', ocr: scriptedOcr('x'), limits: { maxOcrPages: 2 } }), 'document_too_many_pages'],
      ['scan over the OCR size budget', () => convertDocument(fixture('linn.pdf'), { filename: 'a.pdf', ocr: scriptedOcr('x'), limits: { maxOcrBytes: 50_000 } }), 'document_too_large_for_ocr'],
      ['too many pages at all', () => convertDocument(fixture('tracemonkey.pdf'), { filename: 'a.pdf', limits: { maxPages: 10 } }), 'document_too_complex'],
      ['time budget', () => convertDocument(fixture('TAMReview.pdf'), { filename: 'a.pdf', limits: { timeoutMs: 1 } }), 'document_too_complex'],
    ];
    for (const [name, run, code] of cases) {
      const result = await failure(run());
      expect({ name, code: result.code }).toEqual({ name, code });
      expect(result.message).toMatch(/\.$/);
    }
  });

  it.skipIf(!SHARED_DOCS)('stops when the signal aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(convertDocument(fixture('tracemonkey.pdf'), { filename: 'a.pdf', signal: controller.signal })).rejects.toThrow('stop');
    const later = new AbortController();
    const pending = convertDocument(fixture('TAMReview.pdf'), { filename: 'a.pdf', signal: later.signal, ocr: scriptedOcr('x') });
    later.abort(new Error('cancelled'));
    await expect(pending).rejects.toThrow('cancelled');
  });

  it.skipIf(!SHARED_DOCS)('is deterministic', async () => {
    const first = await convertTracemonkey();
    const second = await convertDocument(fixture('tracemonkey.pdf'), { filename: 'a.pdf' });
    expect(second.blocks).toEqual(first.blocks);
    expect(second.figures.map((figure) => figure.png)).toEqual(first.figures.map((figure) => figure.png));
  });
});

describe('convertDocument: DOCX', () => {
  it.skipIf(!SHARED_DOCS)('keeps paragraphs and turns a table into rows', async () => {
    const doc = await convertDocument(fixture('tables.docx'), { filename: 'tables.docx' });
    expect(doc).toMatchObject({ format: 'docx', pageCount: null, figures: [], figuresDropped: 0 });
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'Above', page: null },
      { kind: 'table', text: 'Top left | Top right\nBottom left | Bottom right', page: null },
      { kind: 'paragraph', text: 'Below', page: null },
    ]);
  });

  it('maps headings and keeps footnotes', async () => {
    const body = [
      docxParagraph('Quarterly report', 'Heading1'),
      '<w:p><w:r><w:t>Revenue grew.</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r></w:p>',
      docxParagraph('Details', 'Heading2'),
      docxParagraph('More text.'),
    ].join('');
    const footnotes = '<w:footnote w:id="1"><w:p><w:r><w:t>Audited figures.</w:t></w:r></w:p></w:footnote>';
    const doc = await convertDocument(buildDocx(body, footnotes), { filename: 'report.docx' });
    expect(doc.blocks.slice(0, 3)).toEqual([
      { kind: 'heading', text: 'Quarterly report', page: null, level: 1 },
      { kind: 'paragraph', text: 'Revenue grew.[1]', page: null },
      { kind: 'heading', text: 'Details', page: null, level: 2 },
    ]);
    expect(doc.blocks.at(-1)).toEqual({ kind: 'list', text: '1. Audited figures.', page: null });
  });

  it('keeps embedded pictures as figures where they appear, with their caption and OCR text', async () => {
    const body = [
      docxParagraph('Intro paragraph.'),
      docxImage('rIdChart', 'Bar chart of sales'),
      docxParagraph('Figure 1. Sales by region. Source: finance.'),
      docxImage('rIdIcon', 'tiny icon'),
      docxImage('rIdPhoto', 'Team photo &amp; friends'),
      docxParagraph('The end.'),
    ].join('');
    const media = { rIdChart: await textPng(['North 40', 'South 60']), rIdIcon: await textPng([], 16, 16), rIdPhoto: await textPng(['Team'], 300, 200) };
    const ocr = scriptedOcr('North 40 South 60');
    const doc = await convertDocument(buildDocx(body, undefined, media), { filename: 'report.docx', ocr });
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'Intro paragraph.', page: null },
      { kind: 'figure', text: '[Figure: Figure 1. Sales by region. Text in figure: North 40 South 60]', page: null },
      { kind: 'paragraph', text: 'Figure 1. Sales by region. Source: finance.', page: null },
      { kind: 'figure', text: '[Figure: Team photo & friends. Text in figure: North 40 South 60]', page: null },
      { kind: 'paragraph', text: 'The end.', page: null },
    ]);
    expect(doc.figures.map((figure) => [figure.page, figure.width, figure.height, figure.caption])).toEqual([
      [null, 400, 120, 'Figure 1. Sales by region.'],
      [null, 300, 200, 'Team photo & friends'],
    ]);
    expect(Array.from(doc.figures[0]?.png.subarray(0, 4) ?? [])).toEqual([0x89, 0x50, 0x4e, 0x47]);
    const budget = await convertDocument(buildDocx(body, undefined, media), { filename: 'report.docx', limits: { maxFigures: 1 } });
    expect([budget.figures.length, budget.figuresDropped]).toEqual([1, 1]);
    expect(budget.blocks.filter((block) => block.kind === 'figure')).toEqual([{ kind: 'figure', text: '[Figure: Figure 1. Sales by region]', page: null }]);
  });

  it.skipIf(!SHARED_DOCS)('maps broken and oversized Word files to document codes', async () => {
    const broken = buildZip({ 'word/document.xml': '<w:document><w:body><w:p>' });
    expect((await failure(convertDocument(broken, { filename: 'a.docx' }))).code).toBe('malformed_document');
    expect((await failure(convertDocument(fixture('tables.docx'), { filename: 'a.docx', limits: { maxUncompressedBytes: 1000 } }))).code).toBe('document_too_complex');
    expect((await failure(convertDocument(buildDocx(docxParagraph('  ')), { filename: 'a.docx' }))).code).toBe('empty_document');
  });
});

describe('convertDocument: text formats', () => {
  const bytes = (value: string): Uint8Array => new TextEncoder().encode(value);

  it('converts HTML, Markdown, code, CSV, JSON and text', async () => {
    expect((await convertDocument(bytes('<html><body><article><h1>T</h1><p>Body text here.</p></article></body></html>'), { filename: 'a.html' })).blocks).toEqual([
      { kind: 'heading', text: 'T', page: null, level: 1 },
      { kind: 'paragraph', text: 'Body text here.', page: null },
    ]);
    expect((await convertDocument(bytes('# A\n\ntext'), { filename: 'a.md' })).blocks[0]).toEqual({ kind: 'heading', text: 'A', page: null, level: 1 });
    expect(await convertDocument(bytes('def f():\n    return 1\n'), { filename: 'f.py' })).toMatchObject({
      format: 'code',
      pageCount: null,
      blocks: [{ kind: 'code', text: 'def f():\n    return 1', page: null, language: 'python' }],
    });
    expect((await convertDocument(bytes('a,b\n1,2\n'), { filename: 'x.csv' })).blocks).toEqual([{ kind: 'table', text: 'a,b\n1,2', page: null }]);
    expect((await convertDocument(bytes('{"k": 1}'), { filename: 'x.json' })).blocks).toEqual([{ kind: 'code', text: '{"k": 1}', page: null, language: 'json' }]);
    expect((await convertDocument(bytes('Hello there.'), { filename: 'x.txt' })).format).toBe('text');
  });

  it('refuses empty and unsupported files with their codes', async () => {
    expect((await failure(convertDocument(bytes(''), { filename: 'a.txt' }))).code).toBe('empty_document');
    expect((await failure(convertDocument(bytes('  \n\n '), { filename: 'a.md' }))).code).toBe('empty_document');
    expect((await failure(convertDocument(bytes('<html><body><nav><a href="/">Home</a></nav></body></html>'), { filename: 'a.html' }))).code).toBe('empty_document');
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    expect(await failure(convertDocument(png, { filename: 'scan.pdf' }))).toMatchObject({ code: 'unsupported_document', status: 400 });
    expect((await failure(convertDocument(buildZip({ 'a.txt': 'x' }), { filename: 'a.docx' }))).code).toBe('unsupported_document');
  });

  it.skipIf(!SHARED_DOCS)('feeds chunking: pieces cover the document and words are countable', async () => {
    const doc = await convertTracemonkey();
    const pieces = chunkDocument(doc.blocks, { strategy: 'auto', maxChars: 2000, overlapChars: 0 });
    expect(pieces.map((piece) => piece.text).join('')).toBe(documentText(doc.blocks));
    expect(pieces[0]?.page).toBe(1);
    expect(pieces.at(-1)?.pageEnd).toBe(14);
    expect(countWords(documentText(doc.blocks))).toBeGreaterThan(10_000);
  });
});
