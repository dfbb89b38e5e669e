import { type HtmlElement, type HtmlNode, parseHtml, removeNode, textContent, walk } from './html-parser.js';
import type { DocumentBlock } from './types.js';

/** Options of {@link htmlToBlocks}. */
export type HtmlToBlocksOptions = {
  /**
   * Keep only the page's main content (a readability-style extractor drops navigation, headers,
   * footers, sidebars, forms, scripts and boilerplate). Off for HTML made from DOCX, which is all content.
   * @default true
   */
  mainContentOnly?: boolean;
};

/** Elements that never carry document content. */
const JUNK_TAGS = new Set([
  'script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link', 'nav', 'aside', 'footer', 'form',
  'button', 'input', 'select', 'textarea', 'option', 'iframe', 'svg', 'math', 'canvas', 'menu', 'dialog',
  'object', 'embed', 'map', 'audio', 'video', 'label', 'fieldset',
]);
const JUNK_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menu', 'menubar', 'dialog', 'alert', 'toolbar', 'tablist']);

/** Class/id fragments of boilerplate (after Mozilla Readability's "unlikely candidates", plus MediaWiki chrome). */
const UNLIKELY = /-ad-|(^|[\s_-])ads?($|[\s_-])|ai2html|banner|breadcrumb|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|navbox|navbar|(^|[\s_-])nav($|[\s_-])|navigation|(^|[\s_-])toc($|[\s_-])|jump|skip-?link|editsection|catlinks|printfooter|noprint|sitesub|contentsub|sitenotice|cookie|newsletter|share|subscribe|portal|interlanguage|(^|\s)mw-(head|panel)(\s|$)|p-lang|footnotes-nav/i;
/** Class/id fragments that mark possible content; they protect an element from UNLIKELY. */
const MAYBE_CONTENT = /and|article|body|column|content|main|shadow/i;
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story/i;
const NEGATIVE = /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|foot|footer|footnote|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget/i;

const BLOCK_TAGS = new Set([
  'address', 'article', 'blockquote', 'body', 'center', 'dd', 'details', 'div', 'dl', 'dt', 'figcaption', 'figure',
  'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'ol', 'p', 'pre', 'section',
  'summary', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul', 'caption', '#root', 'html',
]);

function classAndId(element: HtmlElement): string {
  return `${element.attributes['class'] ?? ''} ${element.attributes['id'] ?? ''}`.trim();
}

function isHidden(element: HtmlElement): boolean {
  if ('hidden' in element.attributes) return true;
  if (element.attributes['aria-hidden'] === 'true') return true;
  const style = (element.attributes['style'] ?? '').replace(/\s+/g, '').toLowerCase();
  return style.includes('display:none') || style.includes('visibility:hidden');
}

function collapse(text: string): string {
  return text.replace(/[\s\u00a0]+/g, ' ').trim();
}

function linkDensity(element: HtmlElement, textLength: number): number {
  if (textLength === 0) return 0;
  let linkLength = 0;
  for (const node of walk(element)) {
    if (node.type === 'element' && node.tag === 'a') linkLength += collapse(textContent(node)).length;
  }
  return Math.min(1, linkLength / textLength);
}

/**
 * Visits elements in document order without descending into the ones `test` picks, and removes
 * those. Linear in the tree size.
 */
function removeWhere(root: HtmlElement, test: (element: HtmlElement) => boolean): void {
  const pending: HtmlElement[] = [root];
  while (pending.length > 0) {
    const element = pending.pop();
    if (element === undefined) break;
    const kept: HtmlNode[] = [];
    for (const child of element.children) {
      if (child.type === 'element' && test(child)) child.parent = null;
      else kept.push(child);
    }
    element.children = kept;
    for (let index = kept.length - 1; index >= 0; index--) {
      const child = kept[index];
      if (child !== undefined && child.type === 'element') pending.push(child);
    }
  }
}

function removeBoilerplate(root: HtmlElement): void {
  removeWhere(root, (node) => {
    const tag = node.tag;
    if (tag === 'html' || tag === 'body' || tag === 'article' || tag === 'main') return false;
    const role = node.attributes['role'] ?? '';
    if (JUNK_TAGS.has(tag) || JUNK_ROLES.has(role) || isHidden(node)) return true;
    if (tag === 'header') return !hasAncestor(node, (element) => element.tag === 'article' || element.tag === 'main');
    const names = classAndId(node);
    if (names === '' || tag === 'a' || !UNLIKELY.test(names) || MAYBE_CONTENT.test(names)) return false;
    return !hasAncestor(node, (element) => element.tag === 'table' || element.tag === 'pre' || element.tag === 'code');
  });
}

function hasAncestor(node: HtmlNode, test: (element: HtmlElement) => boolean): boolean {
  let current = node.parent;
  while (current !== null) {
    if (test(current)) return true;
    current = current.parent;
  }
  return false;
}

function classWeight(element: HtmlElement): number {
  let weight = 0;
  for (const value of [element.attributes['class'], element.attributes['id']]) {
    if (value === undefined || value === '') continue;
    if (NEGATIVE.test(value)) weight -= 25;
    if (POSITIVE.test(value)) weight += 25;
  }
  return weight;
}

function tagBaseScore(tag: string): number {
  if (tag === 'div' || tag === 'article' || tag === 'main' || tag === 'section') return 5;
  if (tag === 'pre' || tag === 'td' || tag === 'blockquote') return 3;
  if (['address', 'ol', 'ul', 'dl', 'dd', 'dt', 'li', 'form'].includes(tag)) return -3;
  if (['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'th'].includes(tag)) return -5;
  return 0;
}

function hasBlockChild(element: HtmlElement): boolean {
  return element.children.some((child) => child.type === 'element' && BLOCK_TAGS.has(child.tag));
}

/**
 * Picks the element holding the main content (Readability's scoring: paragraphs vote for their
 * parent and, less, for their grandparents; link-heavy candidates lose), plus related siblings.
 */
function selectMainContent(body: HtmlElement): HtmlElement[] {
  const scores = new Map<HtmlElement, number>();
  for (const node of walk(body)) {
    if (node.type !== 'element') continue;
    const isParagraph = node.tag === 'p' || node.tag === 'pre' || node.tag === 'td' || (node.tag === 'div' && !hasBlockChild(node));
    if (!isParagraph) continue;
    const text = collapse(textContent(node));
    if (text.length < 25) continue;
    const score = 1 + text.split(',').length + Math.min(Math.floor(text.length / 100), 3);
    let ancestor = node.parent;
    for (let level = 0; ancestor !== null && level < 5; level++, ancestor = ancestor.parent) {
      if (ancestor.tag === '#root') break;
      if (!scores.has(ancestor)) scores.set(ancestor, tagBaseScore(ancestor.tag) + classWeight(ancestor));
      const divider = level === 0 ? 1 : level === 1 ? 2 : level * 3;
      scores.set(ancestor, (scores.get(ancestor) ?? 0) + score / divider);
    }
  }
  let best: HtmlElement | null = null;
  let bestScore = -Infinity;
  for (const [element, score] of scores) {
    const textLength = collapse(textContent(element)).length;
    const final = score * (1 - linkDensity(element, textLength));
    scores.set(element, final);
    if (final > bestScore) {
      best = element;
      bestScore = final;
    }
  }
  if (best === null) return [body];
  const parent = best.parent;
  if (parent === null) return [best];
  const threshold = Math.max(10, bestScore * 0.2);
  const kept: HtmlElement[] = [];
  for (const sibling of parent.children) {
    if (sibling.type !== 'element') continue;
    if (sibling === best) {
      kept.push(sibling);
      continue;
    }
    const score = scores.get(sibling);
    if (score !== undefined && score >= threshold) {
      kept.push(sibling);
      continue;
    }
    if (sibling.tag === 'p') {
      const text = collapse(textContent(sibling));
      const density = linkDensity(sibling, text.length);
      if ((text.length > 80 && density < 0.25) || (text.length > 0 && density === 0 && /\.( |$)/.test(text))) kept.push(sibling);
    }
  }
  return kept;
}

/** Drops link farms left inside the content: lists and blocks that are almost all links. */
function removeLinkFarms(content: HtmlElement): void {
  removeWhere(content, (node) => {
    if (!['ul', 'ol', 'div', 'table', 'section'].includes(node.tag)) return false;
    let links = 0;
    let linkLength = 0;
    for (const child of walk(node)) {
      if (child.type === 'element' && child.tag === 'a') {
        links++;
        linkLength += collapse(textContent(child)).length;
      }
    }
    if (links < 5) return false;
    const textLength = collapse(textContent(node)).length;
    return textLength / links < 25 && linkLength / Math.max(1, textLength) > 0.8;
  });
}

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
