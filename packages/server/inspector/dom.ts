// The only way the inspector puts anything on the page. Everything it shows was written by somebody
// else's end users (turns, filenames, document text), so text goes in as text nodes and never as
// HTML: no innerHTML, no insertAdjacentHTML, no attribute built from data except `href`s the
// inspector builds itself from ids (and those only as `#/...` fragments).

export type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/** `h('a', { href: '#/x' }, 'text')`: an element with attributes, listeners (`on...`) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value);
      continue;
    }
    if (name === 'href' && !String(value).startsWith('#/')) throw new Error(`the inspector links only inside itself, not to ${String(value)}`);
    element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces the children of `parent` with `children`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A two-column list of facts: `[label, value]` pairs; values left out when null/undefined. */
export function facts(rows: [string, Child][]): HTMLDListElement {
  const list = h('dl', { class: 'facts' });
  for (const [label, value] of rows) {
    if (value === null || value === undefined || value === '') continue;
    list.append(h('dt', {}, label), h('dd', {}, value));
  }
  return list;
}

/**
 * A table from a header row and body rows (each cell text or a node). On a phone each row becomes a
 * card of labelled cells (the CSS reads the label from `data-label`, one of the inspector's own
 * header texts), so long ids and texts get the full width instead of a narrow column; the explicit
 * roles keep it a table for screen readers when CSS changes the display.
 */
export function table(headers: string[], rows: Child[][], caption?: string): HTMLElement {
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { role: 'table' },
      caption ? h('caption', {}, caption) : null,
      h('thead', { role: 'rowgroup' }, h('tr', { role: 'row' }, ...headers.map((header) => h('th', { scope: 'col', role: 'columnheader' }, header)))),
      h('tbody', { role: 'rowgroup' }, ...rows.map((cells) => h('tr', { role: 'row' }, ...cells.map((cell, i) => h('td', { role: 'cell', 'data-label': headers[i] ?? '' }, cell))))),
    ),
  );
}

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '');
