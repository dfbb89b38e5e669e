import type { DocumentBlock } from '../ports/document-converter.js';

/** Normalises line endings to `\n` and drops a byte-order mark. */
export function normalizeNewlines(text: string): string {
  return text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}

/** Plain text: one paragraph per run of non-blank lines (line breaks inside are kept). */
export function plainTextToBlocks(text: string): DocumentBlock[] {
  return normalizeNewlines(text)
    .split(/\n[ \t]*\n+/)
    .map((paragraph) => paragraph.replace(/^\n+|\s+$/g, ''))
    .filter((paragraph) => paragraph.trim() !== '')
    .map((paragraph) => ({ kind: 'paragraph', text: paragraph, page: null }));
}

/** Source code: the whole file as one code block (the chunker cuts it at definitions). */
export function codeToBlocks(text: string, language?: string): DocumentBlock[] {
  const code = normalizeNewlines(text).replace(/\s+$/, '');
  if (code.trim() === '') return [];
  return [language === undefined ? { kind: 'code', text: code, page: null } : { kind: 'code', text: code, page: null, language }];
}

/** CSV: the rows as written, in one table block. */
export function csvToBlocks(text: string): DocumentBlock[] {
  const rows = normalizeNewlines(text).replace(/\s+$/, '').replace(/^\n+/, '');
  return rows.trim() === '' ? [] : [{ kind: 'table', text: rows, page: null }];
}

/** JSON: the text as written, in one code block. */
export function jsonToBlocks(text: string): DocumentBlock[] {
  return codeToBlocks(text, 'json');
}
