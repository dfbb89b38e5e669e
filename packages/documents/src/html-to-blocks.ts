import { type HtmlElement, type HtmlNode, parseHtml, removeNode, textContent, walk } from './html-parser.js';
import { BLOCK_TAGS, collapse, hasBlockChild, removeBoilerplate, removeLinkFarms, selectMainContent } from './html-main-content.js';
import type { DocumentBlock } from '@memory-agents/core/adapter';

/** Options of {@link htmlToBlocks}. */
export type HtmlToBlocksOptions = {
  /**
   * Keep only the page's main content (a readability-style extractor drops navigation, headers,
   * footers, sidebars, forms, scripts and boilerplate). Off for HTML made from DOCX, which is all content.
   * @default true
   */
  mainContentOnly?: boolean;
};


// ---- tree -> blocks -------------------------------------------------------------------------

const LINE_BREAK = '\u2028';

function inlineText(node: HtmlNode, skip?: (element: HtmlElement) => boolean): string {
  let text = '';
  const visit = (current: HtmlNode): void => {
    if (current.type === 'text') {
      text += current.text;
      return;
    }
    if (skip?.(current) === true) return;
    if (current.tag === 'br') {
      text += LINE_BREAK;
      return;
    }
    if (current.tag === 'img') {
      return;
    }
    const isBlock = BLOCK_TAGS.has(current.tag);
    if (isBlock) text += ' ';
    for (const child of current.children) visit(child);
    if (isBlock || current.tag === 'td' || current.tag === 'th') text += ' ';
  };
  visit(node);
  return text
    .replace(/[^\S\u2028]+/g, ' ')
    .replace(/ ?\u2028 ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function listLines(list: HtmlElement, depth: number): string[] {
  const lines: string[] = [];
  const ordered = list.tag === 'ol';
  let number = Number.parseInt(list.attributes['start'] ?? '1', 10);
  if (!Number.isFinite(number)) number = 1;
  const indent = '  '.repeat(depth);
  for (const child of list.children) {
    if (child.type !== 'element') {
      const loose = collapse(child.text);
      if (loose !== '') lines.push(`${indent}${loose}`);
      continue;
    }
    if (child.tag === 'ul' || child.tag === 'ol') {
      lines.push(...listLines(child, depth + 1));
      continue;
    }
    const isNested = (element: HtmlElement): boolean => element !== child && (element.tag === 'ul' || element.tag === 'ol');
    const text = inlineText(child, isNested).replace(/\n+/g, ' ');
    const marker = ordered ? `${number}.` : '-';
    if (child.tag === 'li') number++;
    if (text !== '') lines.push(`${indent}${marker} ${text}`);
    for (const nested of walk(child)) {
      if (nested.type === 'element' && isNested(nested) && !hasAncestorWithin(nested, child, isNested)) lines.push(...listLines(nested, depth + 1));
    }
  }
  return lines;
}

function hasAncestorWithin(node: HtmlNode, stop: HtmlElement, test: (element: HtmlElement) => boolean): boolean {
  let current = node.parent;
  while (current !== null && current !== stop) {
    if (test(current)) return true;
    current = current.parent;
  }
  return false;
}

function tableText(table: HtmlElement): string {
  const lines: string[] = [];
  const caption = table.children.find((child): child is HtmlElement => child.type === 'element' && child.tag === 'caption');
  if (caption !== undefined) {
    const text = inlineText(caption);
    if (text !== '') lines.push(text);
  }
  const rows: HtmlElement[] = [];
  const collectRows = (element: HtmlElement): void => {
    for (const child of element.children) {
      if (child.type !== 'element') continue;
      if (child.tag === 'tr') rows.push(child);
      else if (child.tag === 'thead' || child.tag === 'tbody' || child.tag === 'tfoot') collectRows(child);
    }
  };
  collectRows(table);
  for (const row of rows) {
    const cells = row.children
      .filter((child): child is HtmlElement => child.type === 'element' && (child.tag === 'td' || child.tag === 'th'))
      .map((cell) => inlineText(cell).replace(/\s*\n\s*/g, ' '));
    if (cells.some((cell) => cell !== '')) lines.push(cells.join(' | '));
  }
  return lines.join('\n');
}

function definitionListLines(list: HtmlElement): string[] {
  const lines: string[] = [];
  for (const child of list.children) {
    if (child.type !== 'element') continue;
    const text = inlineText(child).replace(/\n+/g, ' ');
    if (text === '') continue;
    lines.push(child.tag === 'dd' ? `  ${text}` : text);
  }
  return lines;
}

/** Turns a (cleaned) element tree into blocks in reading order. */
export function elementToBlocks(root: HtmlElement): DocumentBlock[] {
  const blocks: DocumentBlock[] = [];
  let pending: HtmlNode[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const holder: HtmlElement = { type: 'element', tag: 'span', attributes: {}, children: pending, parent: null };
    const text = inlineText(holder);
    pending = [];
    if (text !== '') blocks.push({ kind: 'paragraph', text, page: null });
  };
  const push = (block: DocumentBlock): void => {
    if (block.text.trim() !== '') blocks.push(block);
  };
  const visit = (element: HtmlElement): void => {
    for (const child of element.children) {
      if (child.type === 'text') {
        pending.push(child);
        continue;
      }
      const tag = child.tag;
      const heading = /^h([1-6])$/.exec(tag);
      if (heading !== null) {
        flush();
        push({ kind: 'heading', text: inlineText(child).replace(/\s*\n\s*/g, ' '), page: null, level: Number(heading[1]) });
      } else if (tag === 'p' || tag === 'figcaption' || tag === 'caption' || tag === 'summary' || tag === 'address') {
        flush();
        if (hasBlockChild(child) && tag === 'p') visit(child);
        else push({ kind: 'paragraph', text: inlineText(child), page: null });
      } else if (tag === 'pre') {
        flush();
        const codeElement = child.children.find((inner): inner is HtmlElement => inner.type === 'element' && inner.tag === 'code');
        const language = /(?:^|\s)(?:language|lang)-([\w+#-]+)/.exec(codeElement?.attributes['class'] ?? child.attributes['class'] ?? '')?.[1];
        const code = preText(child).replace(/^\n/, '').replace(/\s+$/, '');
        if (code.trim() !== '') blocks.push(language === undefined ? { kind: 'code', text: code, page: null } : { kind: 'code', text: code, page: null, language });
      } else if (tag === 'ul' || tag === 'ol') {
        flush();
        push({ kind: 'list', text: listLines(child, 0).join('\n'), page: null });
      } else if (tag === 'dl') {
        flush();
        push({ kind: 'list', text: definitionListLines(child).join('\n'), page: null });
      } else if (tag === 'table') {
        flush();
        push({ kind: 'table', text: tableText(child), page: null });
      } else if (tag === 'hr') {
        flush();
      } else if (BLOCK_TAGS.has(tag)) {
        flush();
        visit(child);
        flush();
      } else {
        pending.push(child);
      }
    }
  };
  visit(root);
  flush();
  return blocks;
}

function preText(element: HtmlElement): string {
  let text = '';
  for (const node of walk(element)) {
    if (node.type === 'text') text += node.text;
    else if (node.tag === 'br') text += '\n';
  }
  return text;
}

/**
 * Converts HTML to blocks: headings, paragraphs, lists (`- item`), tables (`a | b` rows) and
 * `pre` code. With `mainContentOnly` (the default) only the main content is kept.
 * Deterministic; linear in the input apart from the bounded scoring passes.
 */
export function htmlToBlocks(html: string, options: HtmlToBlocksOptions = {}): DocumentBlock[] {
  const root = parseHtml(html);
  const mainContentOnly = options.mainContentOnly ?? true;
  const body = [...walk(root)].find((node): node is HtmlElement => node.type === 'element' && node.tag === 'body') ?? root;
  if (!mainContentOnly) {
    for (const node of [...walk(root)]) {
      if (node.type === 'element' && (node.tag === 'script' || node.tag === 'style' || node.tag === 'head' || node.tag === 'template')) removeNode(node);
    }
    return elementToBlocks(body);
  }
  const headings1 = [...walk(body)].filter((node): node is HtmlElement => node.type === 'element' && node.tag === 'h1');
  const titleElement = [...walk(root)].find((node): node is HtmlElement => node.type === 'element' && node.tag === 'title');
  const title = headings1.length === 1 && headings1[0] !== undefined ? collapse(textContent(headings1[0])) : collapse(titleElement === undefined ? '' : textContent(titleElement));

  removeBoilerplate(body);
  const content = selectMainContent(body);
  const container: HtmlElement = { type: 'element', tag: 'div', attributes: {}, children: content, parent: null };
  removeLinkFarms(container);
  const blocks = elementToBlocks(container);
  if (title !== '' && !blocks.some((block) => block.kind === 'heading' && block.level === 1)) {
    blocks.unshift({ kind: 'heading', text: title, page: null, level: 1 });
  }
  return blocks;
}
