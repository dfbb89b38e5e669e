import { describe, expect, it } from 'vitest';
import { isServiceError } from '../errors/index.js';
import { buildDocx, buildZip, docxParagraph } from '../testing/conformance/document-converter/build-documents.js';
import { fixture, SHARED_DOCS } from './__fixtures__/shared-docs.js';
import { detectFormat } from './detect-format.js';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

function unsupportedMessage(bytes: Uint8Array, filename: string): string {
  try {
    detectFormat(bytes, filename);
  } catch (error) {
    if (isServiceError(error) && error.code === 'unsupported_document') return error.message;
    throw error;
  }
  throw new Error('expected unsupported_document');
}

describe('detectFormat', () => {
  it.skipIf(!SHARED_DOCS)('detects PDF and DOCX from their bytes whatever the name says', () => {
    expect(detectFormat(fixture('tracemonkey.pdf'), 'notes.txt').format).toBe('pdf');
    expect(detectFormat(fixture('invalid.pdf'), 'x').format).toBe('pdf');
    expect(detectFormat(fixture('tables.docx'), 'tables.bin')).toEqual({
      format: 'docx',
      mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    expect(detectFormat(buildDocx(docxParagraph('Hi')), 'upload').format).toBe('docx');
  });

  it('refuses images, archives, executables and random binary, even named .pdf', () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    expect(unsupportedMessage(png, 'scan.pdf')).toMatch(/PNG image/);
    expect(unsupportedMessage(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16]), 'a.docx')).toMatch(/JPEG/);
    expect(unsupportedMessage(text('GIF89a....'), 'a.gif')).toMatch(/GIF/);
    expect(unsupportedMessage(new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0]), 'a.md')).toMatch(/gzip/);
    expect(unsupportedMessage(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), 'a.txt')).toMatch(/ELF/);
    expect(unsupportedMessage(buildZip({ 'readme.txt': 'hello' }), 'report.docx')).toMatch(/ZIP archive that is not a Word document/);
    expect(unsupportedMessage(buildZip({ 'xl/workbook.xml': '<x/>' }), 'book.xlsx')).toMatch(/Excel/);
    const random = new Uint8Array(4096);
    let seed = 7;
    for (let index = 0; index < random.length; index++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      random[index] = seed >>> 24;
    }
    expect(unsupportedMessage(random, 'data.pdf')).toMatch(/binary data/);
    expect(unsupportedMessage(text('abc\u0000def'), 'a.txt')).toMatch(/binary/);
  });

  it.skipIf(!SHARED_DOCS)('sniffs HTML, JSON, CSV, Markdown, code and text', () => {
    expect(detectFormat(fixture('wikipedia-source.html'), 'page').format).toBe('html');
    expect(detectFormat(text('  <html><body><p>x</p></body></html>'), 'x.txt').format).toBe('html');
    expect(detectFormat(text('{"a": [1, 2]}'), 'data').format).toBe('json');
    expect(detectFormat(text('{"a": 1}\n{"a": 2}\n'), 'rows.jsonl').format).toBe('json');
    expect(detectFormat(text('name,age\nada,36\nalan,41\n'), 'people').format).toBe('csv');
    expect(detectFormat(text('a\tb\n1\t2\n'), 'x.tsv').format).toBe('csv');
    expect(detectFormat(text('# Title\n\n- one\n- two\n\n[link](http://x)'), 'readme').format).toBe('markdown');
    expect(detectFormat(text('Just a line.'), 'notes.md').format).toBe('markdown');
    expect(detectFormat(text('export const x = 1;\n'), 'x.ts')).toEqual({ format: 'code', mediaType: 'text/plain', language: 'typescript' });
    expect(detectFormat(text('#!/usr/bin/env python3\nprint(1)\n'), 'tool')).toMatchObject({ format: 'code', language: 'python' });
    expect(detectFormat(text('Dear reader, this is prose.\nSecond line.'), 'letter').format).toBe('text');
    expect(detectFormat(text(''), 'empty.txt').format).toBe('text');
  });

  it('reports a password-protected Office file as encrypted', () => {
    const name = Array.from('EncryptedPackage').flatMap((char) => [char.charCodeAt(0), 0]);
    const ole = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Array(504).fill(0), ...name, 0, 0]);
    expect(() => detectFormat(ole, 'secret.docx')).toThrow(expect.objectContaining({ code: 'encrypted_document', status: 400 }));
    expect(unsupportedMessage(ole.subarray(0, 512), 'old.doc')).toMatch(/old Microsoft Office/);
  });

  it('reads UTF-16 text with a byte-order mark', () => {
    const utf16 = new Uint8Array([0xff, 0xfe, ...Array.from('Hello').flatMap((char) => [char.charCodeAt(0), 0])]);
    expect(detectFormat(utf16, 'a.txt').format).toBe('text');
  });
});
