import type { DocumentBlock } from '../ports/document-converter.js';

/** Separator between two blocks in {@link documentText}. */
export const BLOCK_SEPARATOR = '\n\n';

/** Where one block sits in {@link documentText}: `[start, end)` character offsets. */
export type BlockSpan = { start: number; end: number; page: number | null; block: DocumentBlock };

/** The serialized form of one block: headings as Markdown ATX headings, everything else as is. */
export function blockText(block: DocumentBlock): string {
  if (block.kind === 'heading') return `${'#'.repeat(Math.min(6, Math.max(1, block.level ?? 1)))} ${block.text}`;
  return block.text;
}

/**
 * The text a document's blocks serialize to, which chunking cuts into pieces: each block's text
 * (headings prefixed `#`..`######` and a space, by level) joined by a blank line (`\n\n`).
 * Lossless chunking (`length`/`auto` without overlap) concatenates back to exactly this string.
 */
export function documentText(blocks: readonly DocumentBlock[]): string {
  return blocks.map(blockText).join(BLOCK_SEPARATOR);
}

/** {@link documentText} plus the span of every block in it. */
export function layoutBlocks(blocks: readonly DocumentBlock[]): { text: string; spans: BlockSpan[] } {
  const spans: BlockSpan[] = [];
  const parts: string[] = [];
  let offset = 0;
  blocks.forEach((block, index) => {
    if (index > 0) offset += BLOCK_SEPARATOR.length;
    const text = blockText(block);
    spans.push({ start: offset, end: offset + text.length, page: block.page, block });
    parts.push(text);
    offset += text.length;
  });
  return { text: parts.join(BLOCK_SEPARATOR), spans };
}
