/**
 * A small, forgiving HTML parser: enough of the HTML5 tree rules to read real pages (raw-text
 * elements, void elements, implied end tags, stray end tags) into a plain tree. It never throws and
 * runs in linear time; nesting deeper than {@link MAX_HTML_DEPTH} is flattened.
 */

export type HtmlText = { type: 'text'; text: string; parent: HtmlElement | null };
export type HtmlElement = {
  type: 'element';
  tag: string;
  attributes: Record<string, string>;
  children: HtmlNode[];
  parent: HtmlElement | null;
};
export type HtmlNode = HtmlElement | HtmlText;

/** Elements deeper than this are attached to their ancestor at this depth instead (no recursion blow-up). */
export const MAX_HTML_DEPTH = 256;

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr', 'keygen', 'basefont', 'frame']);
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'template', 'svg', 'math']);
/** Opening one of these closes an open `<p>` (HTML "closes a p element" rule, simplified). */
const CLOSES_P = new Set(['address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'main', 'menu', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'ul']);

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', ensp: '\u2002', emsp: '\u2003', thinsp: '\u2009',
  ndash: '\u2013', mdash: '\u2014', hellip: '\u2026', lsquo: '\u2018', rsquo: '\u2019', sbquo: '\u201a',
  ldquo: '\u201c', rdquo: '\u201d', bdquo: '\u201e', laquo: '\u00ab', raquo: '\u00bb', middot: '\u00b7',
  bull: '\u2022', copy: '\u00a9', reg: '\u00ae', trade: '\u2122', deg: '\u00b0', plusmn: '\u00b1', times: '\u00d7',
  divide: '\u00f7', euro: '\u20ac', pound: '\u00a3', yen: '\u00a5', cent: '\u00a2', sect: '\u00a7', para: '\u00b6',
  shy: '\u00ad', zwj: '\u200d', zwnj: '\u200c', lrm: '\u200e', rlm: '\u200f', iexcl: '\u00a1', iquest: '\u00bf',
  larr: '\u2190', rarr: '\u2192', uarr: '\u2191', darr: '\u2193', harr: '\u2194', le: '\u2264', ge: '\u2265',
  ne: '\u2260', minus: '\u2212', infin: '\u221e', prime: '\u2032', Prime: '\u2033', frac12: '\u00bd', frac14: '\u00bc',
  frac34: '\u00be', sup1: '\u00b9', sup2: '\u00b2', sup3: '\u00b3', micro: '\u00b5', alpha: '\u03b1', beta: '\u03b2',
  gamma: '\u03b3', delta: '\u03b4', pi: '\u03c0', sigma: '\u03c3', mu: '\u03bc', lambda: '\u03bb', omega: '\u03c9',
  auml: '\u00e4', ouml: '\u00f6', uuml: '\u00fc', Auml: '\u00c4', Ouml: '\u00d6', Uuml: '\u00dc', szlig: '\u00df',
  eacute: '\u00e9', egrave: '\u00e8', ecirc: '\u00ea', aacute: '\u00e1', agrave: '\u00e0', acirc: '\u00e2',
  iacute: '\u00ed', oacute: '\u00f3', uacute: '\u00fa', ccedil: '\u00e7', ntilde: '\u00f1', Eacute: '\u00c9',
};

/** Decodes character references (`&amp;`, `&#8212;`, `&#x2014;`); unknown names are left as written. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31});?/g, (match, body: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    return NAMED_ENTITIES[body] ?? match;
  });
}

function parseAttributes(source: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  const pattern = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (const match of source.matchAll(pattern)) {
    const name = (match[1] ?? '').toLowerCase();
    if (name === '' || name in attributes) continue;
    attributes[name] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attributes;
}

/** Parses an HTML string into a tree rooted at a synthetic `#root` element. */
export function parseHtml(html: string): HtmlElement {
  const root: HtmlElement = { type: 'element', tag: '#root', attributes: {}, children: [], parent: null };
  const stack: HtmlElement[] = [root];
  const top = (): HtmlElement => stack[stack.length - 1] ?? root;
  const appendText = (text: string): void => {
    if (text === '') return;
    const parent = top();
    const last = parent.children[parent.children.length - 1];
    if (last !== undefined && last.type === 'text') last.text += text;
    else parent.children.push({ type: 'text', text, parent });
  };
  const popTo = (tag: string, boundary: Set<string>): boolean => {
    for (let index = stack.length - 1; index > 0; index--) {
      const element = stack[index];
      if (element === undefined) break;
      if (element.tag === tag) {
        stack.length = index;
        return true;
      }
      if (boundary.has(element.tag)) return false;
    }
    return false;
  };
  const listBoundary = new Set(['ul', 'ol', 'menu', 'table', 'body']);
  const tableBoundary = new Set(['table', 'body']);
  const cellBoundary = new Set(['tr', 'table', 'body']);
  const paragraphBoundary = new Set(['table', 'td', 'th', 'li', 'div', 'section', 'article', 'main', 'body', 'blockquote', 'button']);
  const dlBoundary = new Set(['dl', 'table', 'body']);

  let cursor = 0;
  const length = html.length;
  while (cursor < length) {
    const lt = html.indexOf('<', cursor);
    if (lt === -1) {
      appendText(decodeEntities(html.slice(cursor)));
      break;
    }
    if (lt > cursor) appendText(decodeEntities(html.slice(cursor, lt)));
    cursor = lt;
    if (html.startsWith('<!--', cursor)) {
      const end = html.indexOf('-->', cursor + 4);
      cursor = end === -1 ? length : end + 3;
      continue;
    }
    if (html.startsWith('<![CDATA[', cursor)) {
      const end = html.indexOf(']]>', cursor + 9);
      appendText(html.slice(cursor + 9, end === -1 ? length : end));
      cursor = end === -1 ? length : end + 3;
      continue;
    }
    if (html[cursor + 1] === '!' || html[cursor + 1] === '?') {
      const end = html.indexOf('>', cursor);
      cursor = end === -1 ? length : end + 1;
      continue;
    }
    const isEnd = html[cursor + 1] === '/';
    const nameMatch = /^[a-zA-Z][a-zA-Z0-9:-]*/.exec(html.slice(cursor + (isEnd ? 2 : 1), cursor + (isEnd ? 2 : 1) + 64));
    if (nameMatch === null) {
      appendText('<');
      cursor += 1;
      continue;
    }
    const tag = nameMatch[0].toLowerCase();
    // Find the tag's closing '>' outside quotes.
    let at = cursor + (isEnd ? 2 : 1) + nameMatch[0].length;
    let quote: string | null = null;
    while (at < length) {
      const char = html[at];
      if (quote !== null) {
        if (char === quote) quote = null;
      } else if (char === '"' || char === "'") quote = char;
      else if (char === '>') break;
      at++;
    }
    const inner = html.slice(cursor + (isEnd ? 2 : 1) + nameMatch[0].length, at);
    cursor = at + 1;

    if (isEnd) {
      if (tag === 'p' || tag === 'li' || tag === 'dt' || tag === 'dd') popTo(tag, tag === 'p' ? paragraphBoundary : listBoundary);
      else if (tag === 'td' || tag === 'th' || tag === 'tr') popTo(tag, tableBoundary);
      else if (tag === 'br') appendText('\n');
      else popTo(tag, new Set());
      continue;
    }

    // Implied end tags.
    if (CLOSES_P.has(tag)) popTo('p', paragraphBoundary);
    if (tag === 'li') popTo('li', listBoundary);
    if (tag === 'dt' || tag === 'dd') {
      if (!popTo('dt', dlBoundary)) popTo('dd', dlBoundary);
    }
    if (tag === 'tr') {
      popTo('td', cellBoundary) || popTo('th', cellBoundary);
      popTo('tr', tableBoundary);
    }
    if (tag === 'td' || tag === 'th') {
      if (!popTo('td', cellBoundary)) popTo('th', cellBoundary);
    }
    if (tag === 'option') popTo('option', new Set(['select', 'body']));

    const parent = top();
    const element: HtmlElement = { type: 'element', tag, attributes: parseAttributes(inner), children: [], parent };
    parent.children.push(element);
    const selfClosing = inner.trimEnd().endsWith('/');
    if (RAW_TEXT.has(tag) && !selfClosing) {
      const closePattern = new RegExp(`</${tag}\\s*>`, 'i');
      const rest = html.slice(cursor);
      const close = closePattern.exec(rest);
      const raw = close === null ? rest : rest.slice(0, close.index);
      if (tag === 'title' || tag === 'textarea') element.children.push({ type: 'text', text: decodeEntities(raw), parent: element });
      cursor = close === null ? length : cursor + close.index + close[0].length;
      continue;
    }
    if (VOID.has(tag) || selfClosing) continue;
    if (stack.length < MAX_HTML_DEPTH) stack.push(element);
  }
  return root;
}

/** All descendants of `node` (elements and text) in document order, iteratively. */
export function* walk(node: HtmlElement): Generator<HtmlNode> {
  const pending: HtmlNode[] = [...node.children].reverse();
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === undefined) break;
    yield next;
    if (next.type === 'element') for (let index = next.children.length - 1; index >= 0; index--) pending.push(next.children[index] as HtmlNode);
  }
}

/** The concatenated text of an element's descendants (raw, whitespace not collapsed). */
export function textContent(node: HtmlNode): string {
  if (node.type === 'text') return node.text;
  let text = '';
  for (const child of walk(node)) if (child.type === 'text') text += child.text;
  return text;
}

/** Removes `node` from its parent. */
export function removeNode(node: HtmlNode): void {
  const parent = node.parent;
  if (parent === null) return;
  const index = parent.children.indexOf(node);
  if (index !== -1) parent.children.splice(index, 1);
  node.parent = null;
}
