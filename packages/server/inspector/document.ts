// A document opened at one page: the converted text of that page's pieces (what learning read), from
// the thread turns API narrowed to the upload's observation. A memory's "page N" lands here.
import type { Memory, Schemas } from '@memory-agents/client';
import { api, query } from './api.js';
import { facts, h, type Child } from './dom.js';
import { agentCrumb, counted, documentHref, idWithCopy, link, memoryHref, threadHref, turnHref, type Params } from './ui.js';

type ThreadTurn = Schemas['ThreadTurn'];
/** A piece of a document: a turn with its place in the document. */
type Piece = ThreadTurn & { document: NonNullable<ThreadTurn['document']> };

/** Pages of 200 turns read (a document of more pieces shows its first 2,000). */
const PIECE_PAGES = 10;

/** The upload's pieces, in order (at most PIECE_PAGES pages of 200), and whether that is all of them. */
async function pieces(ids: { agentId: string; threadId: string }, observationId: string): Promise<{ turns: ThreadTurn[]; complete: boolean }> {
  const turns: ThreadTurn[] = [];
  let cursor = '';
  for (let page = 0; page < PIECE_PAGES; page++) {
    const read = await api().threads.turns({ ...ids, observation_id: observationId, limit: 200, cursor: cursor || undefined });
    turns.push(...read.turns);
    cursor = read.next_cursor;
    if (!cursor) return { turns, complete: true };
  }
  return { turns, complete: false };
}

/** Whether a piece is on page `page` (a piece may run from `page` to `page_end`). */
const onPage = (turn: Piece, page: number) => turn.document.page != null && turn.document.page <= page && page <= (turn.document.page_end ?? turn.document.page);

export async function documentView({ agent: agentId, thread: threadId, observation: observationId }: Params, search: URLSearchParams): Promise<Child[]> {
  const ids = { agentId: agentId!, threadId: threadId! };
  const [thread, read, memories] = await Promise.all([
    api().threads.get(ids),
    pieces(ids, observationId!),
    api().memories.list({ agentId: agentId!, observation_id: observationId || undefined, limit: 100 }),
  ]);
  const all = read.turns.filter((turn): turn is Piece => Boolean(turn.document));
  const first = all[0]?.document;
  const pages = [...new Set(all.flatMap((turn) => (turn.document.page == null ? [] : range(turn.document.page, turn.document.page_end ?? turn.document.page))))].sort((a, b) => a - b);
  const asked = Number(search.get('page') ?? pages[0] ?? 0);
  const page = pages.includes(asked) ? asked : pages[0] ?? null;
  const piece = search.get('piece');
  const shown = page === null ? all : all.filter((turn) => onPage(turn, page));
  const byPiece = new Map<number, Memory[]>();
  for (const memory of memories.memories ?? []) if (memory.source?.observation_id === observationId) byPiece.set(memory.source.turn_index, [...(byPiece.get(memory.source.turn_index) ?? []), memory]);
  const href = (n: number) => `${documentHref(agentId!, threadId!, observationId!)}${query({ page: n })}`;
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!), ' / ', link(threadHref(agentId!, threadId!), thread.title)),
    h('h1', { tabindex: '-1' }, first?.filename ?? 'Document', page === null ? '' : `, page ${page}`),
    facts([
      ['Document', first ? idWithCopy(first.source_id) : null],
      ['Upload', idWithCopy(observationId!)],
      ['Pieces', `${all.length}${read.complete ? '' : '+'}`],
      ['Pages', pages.length > 0 ? `${pages.length}` : 'this format has no pages: every piece is shown'],
    ]),
    asked !== page && search.has('page') ? h('p', { class: 'notice error' }, `The document has no page ${search.get('page')}; page ${page} is shown.`) : null,
    pages.length > 1
      ? h(
          'nav',
          { class: 'pages', 'aria-label': 'Pages' },
          'Pages: ',
          ...pages.flatMap((n) => [n === page ? h('strong', { 'aria-current': 'page' }, String(n)) : link(href(n), String(n)), ' ']),
        )
      : null,
    counted(page === null ? 'The converted text' : `The converted text of page ${page}`, `${shown.length} piece${shown.length === 1 ? '' : 's'}`),
    all.length === 0 ? h('p', {}, 'This upload stored no pieces (it was erased, or nothing was read from it).') : null,
    shown.some((turn) => turn.document.page_end != null && turn.document.page_end !== turn.document.page) ? h('p', { class: 'hint' }, 'A piece that runs over several pages is shown whole.') : null,
    h(
      'ol',
      { class: 'messages turns pieces', start: (shown[0]?.document.piece ?? 0) + 1 },
      ...shown.map((turn) => {
        const doc = turn.document;
        const span = doc.page_end && doc.page_end !== doc.page ? `pages ${doc.page}-${doc.page_end}, ` : '';
        const learned = byPiece.get(turn.turn_index) ?? [];
        return h(
          'li',
          { class: String(doc.piece) === piece ? 'turn piece target' : 'turn piece', tabindex: '-1', 'data-piece': String(doc.piece) },
          h('div', { class: 'turn-head' }, h('span', { class: 'time' }, `${span}piece ${Number(doc.piece) + 1} · `), link(turnHref(agentId!, threadId!, observationId!, turn.turn_index), 'in the conversation')),
          h('p', {}, turn.text),
          learned.length === 0 ? null : h('ul', { class: 'turn-memories', 'aria-label': `Memories from piece ${Number(doc.piece) + 1}` }, ...learned.map((memory) => h('li', {}, link(memoryHref(agentId!, memory.memory_id), memory.text)))),
        );
      }),
    ),
    pages.length > 1 && page !== null && pages.indexOf(page) < pages.length - 1 ? h('p', {}, link(href(pages[pages.indexOf(page) + 1]!), `Page ${pages[pages.indexOf(page) + 1]} →`)) : null,
  ];
}

const range = (from: number, to: number): number[] => Array.from({ length: Math.max(1, to - from + 1) }, (_, i) => from + i);

/**
 * A document by its `src_` id (what a citation of a document names), at `?page=`: the upload a
 * memory of it was learned from, opened as {@link documentView} does.
 */
export async function sourceView({ agent: agentId, source: sourceId }: Params, search: URLSearchParams): Promise<Child[]> {
  const list = await api().memories.list({ agentId: agentId!, source_id: sourceId || undefined, include_history: true, limit: 1 });
  const from = list.memories[0]?.source;
  if (!from?.observation_id) {
    return [h('p', { class: 'crumbs' }, agentCrumb(agentId!)), h('h1', { tabindex: '-1' }, 'Document'), h('p', {}, 'Nothing learned from this document is left (it was erased, or no memory came from it).')];
  }
  return documentView({ agent: agentId!, thread: from.thread_id, observation: from.observation_id }, search);
}
