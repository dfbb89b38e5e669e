/**
 * Main-content extraction on a parsed page, after Mozilla Readability: boilerplate removal (junk
 * tags and roles, hidden elements, "unlikely" class names), paragraph scoring to pick the content
 * element and its related siblings, and link-farm removal.
 */
import { type HtmlElement, type HtmlNode, textContent, walk } from './html-parser.js';

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

/** Elements that start a new block of text. */
export const BLOCK_TAGS = new Set([
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

export function collapse(text: string): string {
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

export function removeBoilerplate(root: HtmlElement): void {
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

export function hasBlockChild(element: HtmlElement): boolean {
  return element.children.some((child) => child.type === 'element' && BLOCK_TAGS.has(child.tag));
}

/**
 * Picks the element holding the main content (Readability's scoring: paragraphs vote for their
 * parent and, less, for their grandparents; link-heavy candidates lose), plus related siblings.
 */
export function selectMainContent(body: HtmlElement): HtmlElement[] {
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
export function removeLinkFarms(content: HtmlElement): void {
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

