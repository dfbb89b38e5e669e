/**
 * HTML into a plain tree for the block extractor, read by htmlparser2 (its tokenizer, entity
 * decoding and implied end tags: `<p>`, `<li>`, `<td>`, `<tr>`, `<option>`, `<dt>`/`<dd>`). The tree is
 * ours so the extractor can score, prune and walk it cheaply; building it never throws and is linear
 * in the input. Nesting deeper than {@link MAX_HTML_DEPTH} is flattened, and the content of elements
 * that never carry document text (scripts, styles, embedded SVG/MathML, ...) is dropped.
 */
import { decodeHTML } from 'entities';
import { Parser } from 'htmlparser2';

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

/** Elements kept in the tree (the extractor drops most of them) whose content is not document text. */
const CONTENT_DROPPED = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'noembed', 'noframes', 'xmp', 'svg', 'math']);

/** Decodes character references (`&amp;`, `&#8212;`, `&#x2014;`) with the full HTML entity table. */
export function decodeEntities(text: string): string {
  return text.includes('&') ? decodeHTML(text) : text;
}

/** Parses an HTML string into a tree rooted at a synthetic `#root` element. */
export function parseHtml(html: string): HtmlElement {
  const root: HtmlElement = { type: 'element', tag: '#root', attributes: {}, children: [], parent: null };
  const stack: HtmlElement[] = [root];
  // One entry per element htmlparser2 has open: whether it went on `stack` (deep ones do not).
  const pushed: boolean[] = [];
  let dropping = 0;
  const top = (): HtmlElement => stack[stack.length - 1] ?? root;

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (dropping > 0) {
          if (CONTENT_DROPPED.has(name)) dropping++;
          pushed.push(false);
          return;
        }
        const parent = top();
        const element: HtmlElement = { type: 'element', tag: name, attributes: { ...attributes }, children: [], parent };
        parent.children.push(element);
        const deepen = stack.length < MAX_HTML_DEPTH;
        if (deepen) stack.push(element);
        pushed.push(deepen);
        if (CONTENT_DROPPED.has(name)) dropping = 1;
      },
      ontext(text) {
        if (dropping > 0 || text === '') return;
        const parent = top();
        const last = parent.children[parent.children.length - 1];
        if (last !== undefined && last.type === 'text') last.text += text;
        else parent.children.push({ type: 'text', text, parent });
      },
      onclosetag(name) {
        if (dropping > 0 && CONTENT_DROPPED.has(name)) dropping--;
        if (pushed.pop() === true) stack.pop();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
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
