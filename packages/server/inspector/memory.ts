// One memory; search as a chat turn would (at a moment in the past too); and the model's view: the
// exact memory context and citations chat would get for a message (the recall route).
import { api, ApiError, enc, KeyRefused, query } from './api.js';
import { append, facts, h, table, when, type Child } from './dom.js';
import { agentCrumb, agentHref, confirmed, counted, idWithCopy, link, memoryHref, say, sourceLink, turnHref, type Params } from './ui.js';

export async function memoryView({ agent: agentId, memory: memoryId }: Params): Promise<Child[]> {
  const memory = await api('GET', `/v1/agents/${enc(agentId!)}/memories/${enc(memoryId!)}`);
  const remove = confirmed('Delete this memory…', 'Delete this memory? It is no longer listed, retrieved or cited. This cannot be undone.', 'Delete for good', async () => {
    await api('DELETE', `/v1/agents/${enc(agentId!)}/memories/${enc(memoryId!)}`);
    say(`The memory "${memory.text.slice(0, 60)}${memory.text.length > 60 ? '…' : ''}" was deleted.`, 'info', true);
    location.hash = agentHref(agentId!);
  });
  const source = memory.source ?? {};
  const words = await sourceTurn(agentId!, source);
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, 'Memory'),
    h('blockquote', { class: 'memory-text' }, memory.text),
    facts([
      ['Memory', idWithCopy(memory.memory_id)],
      ['From', sourceLink(agentId!, source)],
      ['Speaker', memory.speaker],
      ['Occurred', when(memory.occurred_at)],
      ['Learned', when(memory.learned_at)],
      ['Valid from', when(memory.valid_from)],
      ['Valid until', when(memory.valid_to)],
      ['Superseded by', memory.superseded_by ? link(memoryHref(agentId!, memory.superseded_by), 'the memory that replaced it') : null],
      ['Suspicious', memory.suspicious ? 'yes: it reads like instructions; it is kept as evidence only' : null],
      ['Span in the turn', memory.span ? `characters ${memory.span.start}-${memory.span.end}` : null],
      ['Learned by', memory.writer],
      ['Learning job', memory.job_id ? idWithCopy(memory.job_id) : null],
      ['Learning credits', memory.learning_credits],
    ]),
    words ? h('h2', {}, 'The words it came from') : null,
    words ? h('blockquote', { class: 'source-words' }, ...marked(words.text, memory.span)) : null,
    Array.isArray(memory.also_from) && memory.also_from.length > 0 ? h('h2', {}, 'Also learned from') : null,
    Array.isArray(memory.also_from) && memory.also_from.length > 0 ? h('ul', {}, ...memory.also_from.map((other: any) => h('li', {}, sourceLink(agentId!, other)))) : null,
    remove,
  ];
}

/** The observed turn a memory came from (its observation's first 200 turns are read), or null. */
async function sourceTurn(agentId: string, source: any): Promise<{ text: string } | null> {
  if (!source?.thread_id || !source.observation_id || Number(source.turn_index) >= 200) return null;
  try {
    const turns = await api('GET', `/v1/agents/${enc(agentId)}/threads/${enc(source.thread_id)}/turns${query({ observation_id: source.observation_id, limit: 200 })}`);
    return turns.turns.find((turn: any) => turn.turn_index === Number(source.turn_index)) ?? null;
  } catch (error) {
    // The thread or observation is gone (erased): the memory page shows the rest.
    if (error instanceof ApiError && error.status === 404 && !(error instanceof KeyRefused)) return null;
    throw error;
  }
}

/** The turn's text with the memory's verbatim span (when it is one) marked. */
function marked(text: string, span: { start: number; end: number } | null | undefined): Child[] {
  if (!span || span.start < 0 || span.end > text.length || span.start >= span.end) return [text];
  return [text.slice(0, span.start), h('mark', {}, text.slice(span.start, span.end)), text.slice(span.end)];
}

/** `2024-02-15T12:00` (a datetime-local value, this browser's zone) from an ISO date-time, and back. */
const localValue = (iso: string) => {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const isoFromLocal = (value: string) => (value ? new Date(value).toISOString() : '');

/** A form of a message and an optional "as of" moment that goes to `href?q=…&as_of=…`. */
function askForm(label: string, id: string, href: string, q: string, asOf: string, button: string): HTMLFormElement {
  const message = h('input', { id, name: 'q', type: 'search', required: true, value: q });
  const moment = h('input', { id: `${id}-as-of`, name: 'as_of', type: 'datetime-local', value: localValue(asOf) });
  const form = h('form', {
    class: 'inline',
    role: 'search',
    onsubmit: (event: Event) => {
      event.preventDefault();
      location.hash = `${href}${query({ q: message.value, as_of: isoFromLocal(moment.value) })}`;
    },
  });
  append(form, [h('label', { for: id }, label), message, h('label', { for: `${id}-as-of` }, 'as of'), moment, h('button', { type: 'submit' }, button)]);
  return form;
}

export const searchForm = (agentId: string, q = '', asOf = '') => askForm('Search as a chat turn would', 'ask', `${agentHref(agentId)}/search`, q, asOf, 'Search');
export const contextForm = (agentId: string, q = '', asOf = '') => askForm('Message', 'context-message', `${agentHref(agentId)}/context`, q, asOf, 'Show the context');

export async function searchView({ agent: agentId }: Params, search: URLSearchParams): Promise<Child[]> {
  const q = search.get('q') ?? '';
  const asOf = search.get('as_of') ?? '';
  const result = await api('POST', `/v1/agents/${enc(agentId!)}/memories/search`, { query: q, ...(asOf ? { as_of: asOf } : {}) });
  const hits: any[] = result.hits ?? [];
  const signals = [...new Set(hits.flatMap((hit) => Object.keys(hit.signals ?? {})))];
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, 'Search'),
    searchForm(agentId!, q, asOf),
    h('p', {}, 'What a chat turn asking ', h('q', {}, q), asOf ? ` as of ${when(asOf)} (what was true then, superseded memories included)` : '', ' would retrieve, and why each memory ranked where it did.'),
    counted('Hits', hits.length),
    hits.length === 0
      ? h('p', {}, 'Nothing was retrieved.')
      : table(
          ['Rank', 'Memory', 'Fused', ...signals.map((signal) => signal.replace('_', ' '))],
          hits.map((hit) => [hit.rank, link(memoryHref(agentId!, hit.memory.memory_id), hit.memory.text), score(hit.score), ...signals.map((signal) => score(hit.signals?.[signal]))]),
          'Score per signal (0 where a signal did not contribute)',
        ),
  ];
}

const score = (value: unknown): string => (typeof value === 'number' ? value.toFixed(3) : '0');

/** Where a citation's `href` points, as a page of the inspector (the turn, or the agent for a document). */
function citationTarget(agentId: string, citation: { href: string; label: string }): string {
  const turn = /\/threads\/(thread_[0-9A-Z]+)\/observe\/(obs_[0-9A-Z]+)\//.exec(citation.href);
  // A turn's label ends "(turn N)" (1-based).
  const index = Number(/\(turn (\d+)\)$/.exec(citation.label)?.[1] ?? 1) - 1;
  return turn ? turnHref(agentId, turn[1]!, turn[2]!, index) : agentHref(agentId);
}

/** The model's view: for a typed message, exactly the memory context and citations chat would use. */
export async function contextView({ agent: agentId }: Params, search: URLSearchParams): Promise<Child[]> {
  const q = search.get('q') ?? '';
  const asOf = search.get('as_of') ?? '';
  const recall = await api('POST', `/v1/agents/${enc(agentId!)}/recall`, { query: q, ...(asOf ? { as_of: asOf } : {}) });
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, "The model's view"),
    contextForm(agentId!, q, asOf),
    h('p', {}, 'What chat would put before the model for ', h('q', {}, q), asOf ? ` as of ${when(asOf)}` : '', ': the memory context, word for word, and the citations it would give.'),
    h('h2', {}, 'Memory context'),
    recall.memory_context === '' ? h('p', {}, 'No memory context: nothing was retrieved.') : h('pre', { class: 'context' }, recall.memory_context),
    counted('Citations', recall.citations.length),
    recall.citations.length === 0
      ? h('p', {}, 'No citations.')
      : table(
          ['Citation', 'Kind', 'Verified'],
          recall.citations.map((citation: any) => [link(citationTarget(agentId!, citation), citation.label), citation.media_type, citation.verified ? 'yes' : 'no']),
        ),
  ];
}

