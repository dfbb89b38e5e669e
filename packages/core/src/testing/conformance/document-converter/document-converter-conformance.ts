import { describe, expect, it } from 'vitest';
import { ServiceError, isServiceError, type ErrorCode } from '../../../errors/index.js';
import type { Ocr } from '../../../ports/ocr.js';
import type { ConvertedDocument, DocFormat, DocumentConverter } from '../../../ports/document-converter.js';
import { buildDocx, buildPdf, buildZip, docxParagraph } from './build-documents.js';

/** What `create()` of {@link describeDocumentConverterConformance} returns. */
export type DocumentConverterConformanceTarget = {
  /** The converter under test. */
  port: DocumentConverter;
  /** Runs after each test, even when it fails. */
  cleanup?: () => Promise<void>;
};

/** Options of {@link describeDocumentConverterConformance}. */
export type DocumentConverterConformanceOptions = {
  /** Names the `describe` block, e.g. `'documentConverter'`. */
  name: string;
  /** Builds a fresh converter; called once per test. */
  create: () => Promise<DocumentConverterConformanceTarget>;
  /** Test titles to skip, e.g. `['limits: maxPages refuses a longer PDF']`. */
  skip?: string[];
};

/** One sample file per format: what it is called, its bytes and words its text must contain. */
type Sample = { filename: string; bytes: Uint8Array; words: string[]; paged: boolean };

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Small generated files, one per canonical format (no files on disk, no native module). */
export function documentSamples(): Record<DocFormat, Sample> {
  return {
    pdf: {
      filename: 'harbor.pdf',
      bytes: buildPdf([{ text: ['Harbor Guide', 'The harbor opens at dawn for fishing boats.'] }, { text: ['The lighthouse keeper rings the bell at noon.'] }]),
      words: ['harbor opens at dawn', 'lighthouse keeper'],
      paged: true,
    },
    docx: {
      filename: 'harbor.docx',
      bytes: buildDocx(docxParagraph('Harbor Guide', 'Heading1') + docxParagraph('The harbor opens at dawn for fishing boats.')),
      words: ['Harbor Guide', 'harbor opens at dawn'],
      paged: false,
    },
    html: {
      filename: 'harbor.html',
      bytes: encode(
        '<!doctype html><html><head><title>Harbor</title></head><body><nav><a href="/">Home</a></nav>' +
          '<main><h1>Harbor Guide</h1><p>The harbor opens at dawn for fishing boats.</p></main></body></html>',
      ),
      words: ['Harbor Guide', 'harbor opens at dawn'],
      paged: false,
    },
    markdown: { filename: 'harbor.md', bytes: encode('# Harbor Guide\n\nThe harbor opens at dawn for fishing boats.\n'), words: ['Harbor Guide', 'harbor opens at dawn'], paged: false },
    text: { filename: 'harbor.txt', bytes: encode('The harbor opens at dawn for fishing boats.\n\nThe lighthouse keeper rings the bell at noon.\n'), words: ['harbor opens at dawn', 'lighthouse keeper'], paged: false },
    code: { filename: 'harbor.ts', bytes: encode('export function harborOpensAt(): string {\n  return "dawn";\n}\n'), words: ['harborOpensAt', 'dawn'], paged: false },
    csv: { filename: 'harbor.csv', bytes: encode('place,opens\nharbor,dawn\nmarket,noon\n'), words: ['harbor', 'market'], paged: false },
    json: { filename: 'harbor.json', bytes: encode('{"harbor": {"opens": "dawn"}}\n'), words: ['harbor', 'dawn'], paged: false },
  };
}

const ALL_FORMATS = Object.keys(documentSamples()) as DocFormat[];

/**
 * A two-page PDF whose first page is a scan (a grey image over most of the page, no text layer)
 * and whose second page has text. Raw grey samples: no image encoder needed.
 */
export function scannedSamplePdf(): Uint8Array {
  const [width, height] = [60, 80];
  const gray = new Uint8Array(width * height).map((_, index) => (Math.floor(index / width) % 8 < 2 ? 0 : 255));
  return buildPdf([{ image: { gray, pixelWidth: width, pixelHeight: height, box: [36, 36, 540, 720] } }, { text: ['The lighthouse keeper rings the bell at noon.'] }]);
}

/** The OCR port's side of the tests: an engine that answers `text` for every image (the port is external). */
function scriptedOcr(answer: () => Promise<string>): Ocr & { calls: number } {
  const ocr = {
    specificationVersion: 'v1' as const,
    id: 'conformance-scripted-ocr',
    calls: 0,
    async recognize() {
      ocr.calls++;
      return { text: await answer(), confidence: 90 };
    },
  };
  return ocr;
}

async function errorCode(promise: Promise<unknown>): Promise<ErrorCode> {
  try {
    await promise;
  } catch (error) {
    if (isServiceError(error)) return error.code;
    throw new Error(`expected a ServiceError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected the call to reject');
}

function textOf(document: ConvertedDocument): string {
  return document.blocks.map((block) => block.text).join('\n');
}

/**
 * Registers a vitest suite that checks a {@link DocumentConverter} against the port's contract on
 * small generated files: every format in `port.formats` converts to non-empty blocks holding the
 * file's words (1-based pages on PDF, `null` elsewhere) and `inspect` agrees with `convert`; other
 * formats and non-documents are refused with `unsupported_document`; a file without text gives
 * `empty_document`, a corrupt PDF or Word file `malformed_document`; an aborted signal rejects with
 * its reason; `maxTextChars` and `maxPages` are honoured; the same bytes give the same blocks. On
 * PDF it also checks OCR: a scanned page is reported by `inspect`, refused without an `ocr` port,
 * read through a scripted one, and `ocr_failed` / `maxOcrPages` behave as the port requires.
 *
 * @example
 * ```ts
 * describeDocumentConverterConformance({ name: 'documentConverter', create: async () => ({ port: documentConverter() }) });
 * ```
 */
export function describeDocumentConverterConformance({ name, create, skip = [] }: DocumentConverterConformanceOptions): void {
  const test = (title: string, body: (port: DocumentConverter) => Promise<void>) =>
    (skip.includes(title) ? it.skip : it)(title, () => withConverter(create, body));
  /** A test that runs only when the converter reads `format` (decided at run time, from `port.formats`). */
  const testFor = (format: DocFormat, title: string, body: (port: DocumentConverter) => Promise<void>) =>
    test(title, async (port) => {
      if (port.formats.includes(format)) await body(port);
    });
  const samples = documentSamples();

  describe(name, () => {
    test('identity: specificationVersion v1, an id and at least one known format', async (port) => {
      expect(port.specificationVersion).toBe('v1');
      expect(port.id).toMatch(/\S/);
      expect(port.formats.length).toBeGreaterThan(0);
      for (const format of port.formats) expect(ALL_FORMATS).toContain(format);
    });

    for (const format of ALL_FORMATS) {
      testFor(format, `convert: ${format} becomes non-empty blocks in reading order`, async (port) => {
        const sample = samples[format];
        const document = await port.convert({ bytes: sample.bytes, filename: sample.filename });
        expect(document.format).toBe(format);
        expect(document.mediaType).toMatch(/^[a-z]+\/[\w.+-]+$/);
        expect(document.blocks.length).toBeGreaterThan(0);
        for (const block of document.blocks) expect(block.text.trim()).not.toBe('');
        const text = textOf(document);
        let last = -1;
        for (const words of sample.words) {
          const at = text.indexOf(words);
          expect(at, `"${words}" in the ${format} text`).toBeGreaterThan(last);
          last = at;
        }
        expect(document.figures.length + document.figuresDropped).toBeGreaterThanOrEqual(0);
        if (sample.paged) {
          expect(document.pageCount).toBe(2);
          for (const block of document.blocks) expect(block.page === 1 || block.page === 2).toBe(true);
          expect(document.blocks.find((block) => block.text.includes('lighthouse'))?.page).toBe(2);
        } else {
          expect(document.pageCount).toBeNull();
          for (const block of document.blocks) expect(block.page).toBeNull();
        }
      });

      testFor(format, `inspect: ${format} reports the format and media type convert reports, without OCR pages`, async (port) => {
        const sample = samples[format];
        const [inspection, document] = await Promise.all([port.inspect({ bytes: sample.bytes, filename: sample.filename }), port.convert({ bytes: sample.bytes, filename: sample.filename })]);
        expect(inspection).toEqual({ format, mediaType: document.mediaType, pageCount: document.pageCount, pagesNeedingOcr: [] });
      });
    }

    test('convert: the same bytes give the same blocks', async (port) => {
      for (const format of port.formats) {
        const { bytes, filename } = samples[format];
        expect(await port.convert({ bytes, filename })).toEqual(await port.convert({ bytes, filename }));
      }
    });

    test('unsupported: formats outside `formats` and non-documents are refused with unsupported_document', async (port) => {
      const refused = [
        ...ALL_FORMATS.filter((format) => !port.formats.includes(format)).map((format) => samples[format]),
        { filename: 'photo.png', bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]) },
        { filename: 'sheet.xlsx', bytes: buildZip({ '[Content_Types].xml': '<Types/>', 'xl/workbook.xml': '<workbook/>' }) },
        { filename: 'blob.bin', bytes: new Uint8Array([0, 1, 2, 3, 0, 255, 254, 0, 7, 0, 0, 9]) },
      ];
      for (const { bytes, filename } of refused) {
        expect(await errorCode(port.convert({ bytes, filename })), filename).toBe('unsupported_document');
        expect(await errorCode(port.inspect({ bytes, filename })), filename).toBe('unsupported_document');
      }
    });

    test('empty: a file without readable text is refused with empty_document', async (port) => {
      const empties = [
        { format: 'text', filename: 'blank.txt', bytes: encode('   \n\n\t \n') },
        { format: 'markdown', filename: 'blank.md', bytes: encode('---\n\n') },
        { format: 'pdf', filename: 'blank.pdf', bytes: buildPdf([{}]) },
        { format: 'docx', filename: 'blank.docx', bytes: buildDocx(docxParagraph(' ')) },
      ] as const;
      for (const { format, filename, bytes } of empties) {
        if (port.formats.includes(format)) expect(await errorCode(port.convert({ bytes, filename })), filename).toBe('empty_document');
      }
    });

    testFor('pdf', 'corrupt: a PDF with a damaged body is refused with malformed_document', async (port) => {
      const bytes = encode('%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n');
      expect(await errorCode(port.convert({ bytes, filename: 'broken.pdf' }))).toBe('malformed_document');
    });

    testFor('docx', 'corrupt: a Word file with a damaged document part is refused with malformed_document', async (port) => {
      const bytes = buildZip({ '[Content_Types].xml': '<Types/>', 'word/document.xml': '<w:document><w:body><w:p>never closed' });
      expect(await errorCode(port.convert({ bytes, filename: 'broken.docx' }))).toBe('malformed_document');
    });

    test('abort: an already aborted signal rejects with its reason, before any work', async (port) => {
      const reason = new Error('caller went away');
      for (const format of port.formats) {
        const { bytes, filename } = samples[format];
        await expect(port.convert({ bytes, filename, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
        await expect(port.inspect({ bytes, filename, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      }
    });

    testFor('pdf', 'abort: a signal aborted while a PDF converts rejects with its reason', async (port) => {
      const reason = new Error('caller went away');
      const controller = new AbortController();
      const { bytes, filename } = samples.pdf;
      const pending = port.convert({ bytes, filename, signal: controller.signal });
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      // The converter keeps working after an abort.
      expect((await port.convert({ bytes, filename })).blocks.length).toBeGreaterThan(0);
    });

    testFor('pdf', 'ocr: inspect reports the scanned page of a PDF, without running OCR', async (port) => {
      const inspection = await port.inspect({ bytes: scannedSamplePdf(), filename: 'scan.pdf' });
      expect(inspection).toMatchObject({ format: 'pdf', pageCount: 2, pagesNeedingOcr: [1] });
    });

    testFor('pdf', 'ocr: a scanned page without an OCR port is refused with document_needs_ocr', async (port) => {
      expect(await errorCode(port.convert({ bytes: scannedSamplePdf(), filename: 'scan.pdf' }))).toBe('document_needs_ocr');
    });

    testFor('pdf', 'ocr: the scanned page holds what the OCR port read, on its page, listed in ocrPages', async (port) => {
      const ocr = scriptedOcr(async () => 'Invoice 2024-001\nTotal 123.45 EUR');
      const document = await port.convert({ bytes: scannedSamplePdf(), filename: 'scan.pdf', ocr });
      expect(ocr.calls).toBe(1);
      expect(document.ocrPages).toEqual([1]);
      const first = document.blocks.filter((block) => block.page === 1).map((block) => block.text).join('\n');
      expect(first).toContain('Invoice 2024-001');
      expect(first).toContain('Total 123.45 EUR');
      expect(document.blocks.find((block) => block.text.includes('lighthouse'))?.page).toBe(2);
    });

    testFor('pdf', 'ocr: an engine failure gives ocr_failed; a ServiceError of the OCR port passes through', async (port) => {
      const failing = scriptedOcr(async () => {
        throw new Error('engine crashed');
      });
      expect(await errorCode(port.convert({ bytes: scannedSamplePdf(), filename: 'scan.pdf', ocr: failing }))).toBe('ocr_failed');
      const busy = scriptedOcr(async () => {
        throw new ServiceError('ocr_busy', 'Text recognition is busy; retry in a few minutes.');
      });
      expect(await errorCode(port.convert({ bytes: scannedSamplePdf(), filename: 'scan.pdf', ocr: busy }))).toBe('ocr_busy');
    });

    testFor('pdf', 'limits: more scanned pages than maxOcrPages are refused with document_too_many_pages', async (port) => {
      const ocr = scriptedOcr(async () => 'never read');
      expect(await errorCode(port.convert({ bytes: scannedSamplePdf(), filename: 'scan.pdf', ocr, limits: { maxOcrPages: 0 } }))).toBe('document_too_many_pages');
      expect(ocr.calls).toBe(0);
    });

    test('limits: more text than maxTextChars is refused with document_too_complex', async (port) => {
      for (const format of port.formats) {
        const { bytes, filename } = samples[format];
        expect(await errorCode(port.convert({ bytes, filename, limits: { maxTextChars: 8 } })), format).toBe('document_too_complex');
      }
    });

    testFor('pdf', 'limits: maxPages refuses a longer PDF with document_too_complex', async (port) => {
      const { bytes, filename } = samples.pdf;
      expect(await errorCode(port.convert({ bytes, filename, limits: { maxPages: 1 } }))).toBe('document_too_complex');
      expect((await port.convert({ bytes, filename, limits: { maxPages: 2 } })).pageCount).toBe(2);
    });
  });
}

async function withConverter(create: DocumentConverterConformanceOptions['create'], body: (port: DocumentConverter) => Promise<void>): Promise<void> {
  const { port, cleanup } = await create();
  try {
    await body(port);
  } finally {
    await cleanup?.();
  }
}
