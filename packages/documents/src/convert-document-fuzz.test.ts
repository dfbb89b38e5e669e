import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isServiceError } from '@memory-agents/core';
import { convertDocument } from './convert-document.js';
import { htmlToBlocks } from './html-to-blocks.js';

const DOCUMENT_CODES = new Set(['unsupported_document', 'empty_document', 'malformed_document', 'encrypted_document', 'ingestion_failed', 'document_too_complex']);

const htmlPiece = fc.constantFrom('<p>', '</p>', '<div class="menu">', '</div>', '<ul><li>', '</li>', '<table><tr><td>', '</td>', '<pre>', '</pre>', '<h2>', '</h2>', '<!--', '-->', '<script>', '</script>', '<br>', '&amp;', '&#x1F600;', '&bogus;', 'text, with commas ', 'word ', '<', '>', '"', '\n', '<a href="x">', '</a>', '<nav>', '</nav>');

describe('converters under random input', () => {
  it('turn any HTML-ish text into non-empty blocks without throwing (Markdown: core/src/documents/markdown-to-blocks.test.ts)', () => {
    fc.assert(
      fc.property(fc.array(htmlPiece, { maxLength: 200, size: 'max' }), (pieces) => {
        for (const block of htmlToBlocks(pieces.join(''))) expect(block.text.trim()).not.toBe('');
      }),
      { numRuns: 200 },
    );
  });

  it('either convert random bytes or refuse them with a document code', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 2048, size: 'max' }),
          fc.string({ maxLength: 500, size: 'max' }).map((value) => new TextEncoder().encode(value)),
          // Garbage behind a PDF header goes through pdf.js.
          fc.uint8Array({ maxLength: 512, size: 'max' }).map((tail) => new Uint8Array([...new TextEncoder().encode('%PDF-1.4\n'), ...tail])),
          // A ZIP header with garbage after it.
          fc.uint8Array({ maxLength: 256, size: 'max' }).map((tail) => new Uint8Array([0x50, 0x4b, 0x03, 0x04, ...tail])),
        ),
        fc.constantFrom('a.pdf', 'a.docx', 'a.txt', 'a.md', 'a.html', 'a.csv', 'a.json', 'a.py', 'noext'),
        async (bytes, filename) => {
          try {
            const doc = await convertDocument(bytes, { filename });
            expect(doc.blocks.length).toBeGreaterThan(0);
          } catch (error) {
            expect(isServiceError(error) && DOCUMENT_CODES.has(error.code)).toBe(true);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
