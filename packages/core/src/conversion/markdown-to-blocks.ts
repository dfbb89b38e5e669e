import { normalizeNewlines } from './text-to-blocks.js';
import type { DocumentBlock } from '../ports/document-converter.js';

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const LIST_ITEM = /^ {0,3}([-*+]|\d{1,9}[.)])[ \t]+\S/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const QUOTE = /^ {0,3}>\s?/;
const SETEXT = /^ {0,3}(=+|-+)\s*$/;
const RULE = /^ {0,3}([-*_])( *\1){2,}\s*$/;

/**
 * Markdown to blocks: ATX and setext headings become `heading` blocks (level 1..6), fenced code
 * becomes `code` (with its language), lists `list`, pipe tables `table` (rows `a | b`), everything
 * else `paragraph`. Inline markup is kept as written. YAML front matter becomes a `code` block.
 */
export function markdownToBlocks(source: string): DocumentBlock[] {
  const lines = normalizeNewlines(source).split('\n');
  const blocks: DocumentBlock[] = [];
  let paragraph: string[] = [];
  const flushParagraph = (): void => {
    const text = paragraph.join('\n').trim();
    paragraph = [];
    if (text !== '') blocks.push({ kind: 'paragraph', text, page: null });
  };
  let index = 0;
  if (lines[0] === '---') {
    const end = lines.indexOf('---', 1);
    if (end > 0) {
      const front = lines.slice(1, end).join('\n').trim();
      if (front !== '') blocks.push({ kind: 'code', text: front, page: null, language: 'yaml' });
      index = end + 1;
    }
  }
  while (index < lines.length) {
    const line = lines[index] ?? '';
    const fence = FENCE.exec(line);
    if (fence !== null) {
      flushParagraph();
      const marker = fence[1] ?? '```';
      const language = fence[2] ?? '';
      const body: string[] = [];
      index++;
      while (index < lines.length && !(lines[index] ?? '').trimStart().startsWith(marker)) {
        body.push(lines[index] ?? '');
        index++;
      }
      index++;
      const code = body.join('\n').replace(/\s+$/, '');
      if (code.trim() !== '') blocks.push(language === '' ? { kind: 'code', text: code, page: null } : { kind: 'code', text: code, page: null, language });
      continue;
    }
    const atx = ATX.exec(line);
    if (atx !== null) {
      flushParagraph();
      const text = (atx[2] ?? '').trim();
      if (text !== '') blocks.push({ kind: 'heading', text, page: null, level: (atx[1] ?? '#').length });
      index++;
      continue;
    }
    const next = lines[index + 1];
    if (paragraph.length === 0 && line.trim() !== '' && next !== undefined && SETEXT.test(next) && !LIST_ITEM.test(line) && !RULE.test(line)) {
      blocks.push({ kind: 'heading', text: line.trim(), page: null, level: next.trim().startsWith('=') ? 1 : 2 });
      index += 2;
      continue;
    }
    if (TABLE_ROW.test(line) && next !== undefined && TABLE_RULE.test(next)) {
      flushParagraph();
      const rows: string[] = [];
      while (index < lines.length && TABLE_ROW.test(lines[index] ?? '')) {
        const row = lines[index] ?? '';
        if (!TABLE_RULE.test(row)) {
          rows.push(row.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim()).join(' | '));
        }
        index++;
      }
      // A "table" of rule lines only has no text: nothing to keep.
      if (rows.some((row) => row.replaceAll('|', '').trim() !== '')) blocks.push({ kind: 'table', text: rows.join('\n'), page: null });
      continue;
    }
    if (LIST_ITEM.test(line)) {
      flushParagraph();
      const items: string[] = [];
      while (index < lines.length) {
        const current = lines[index] ?? '';
        if (LIST_ITEM.test(current) || (current.trim() !== '' && /^\s+\S/.test(current))) {
          items.push(current.replace(/\s+$/, ''));
          index++;
        } else if (current.trim() === '' && LIST_ITEM.test(lines[index + 1] ?? '')) {
          index++;
        } else break;
      }
      blocks.push({ kind: 'list', text: items.join('\n'), page: null });
      continue;
    }
    if (QUOTE.test(line)) {
      flushParagraph();
      const quoted: string[] = [];
      while (index < lines.length && QUOTE.test(lines[index] ?? '')) {
        quoted.push((lines[index] ?? '').replace(QUOTE, ''));
        index++;
      }
      const text = quoted.join('\n').trim();
      if (text !== '') blocks.push({ kind: 'paragraph', text, page: null });
      continue;
    }
    if (line.trim() === '' || RULE.test(line)) {
      flushParagraph();
      index++;
      continue;
    }
    paragraph.push(line);
    index++;
  }
  flushParagraph();
  return blocks;
}
