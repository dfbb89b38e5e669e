// Search as a chat turn would (at a moment in the past too), and the model's view: the exact memory
// context and citations chat would get for a message (the recall route).
import type { Citation, Schemas, Thread } from '@memory-agents/client';
import { api, enc, query } from './api.js';
import { append, facts, h, replace, table, when, type Child } from './dom.js';
import { isoFromLocal, localValue } from './when.js';
import { actionFailed, agentCrumb, agentHref, counted, link, memoryHref, threadHref, turnHref, type Params } from './ui.js';

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
  const result = await api().memories.search({ agentId: agentId!, query: q, ...(asOf ? { as_of: asOf } : {}) });
  const hits = result.hits ?? [];
  const signals = [...new Set(hits.flatMap((hit) => Object.keys(hit.signals ?? {}) as (keyof Schemas['MemorySignals'])[]))];
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

/** Where a citation's `href` points, as a page of the inspector: the turn, or the document at the page its label names. */
function citationTarget(agentId: string, citation: { href: string; label: string }): string {
  const stored = /\/sources\/(src_[0-9A-Za-z_-]+)$/.exec(citation.href);
  if (stored) return `${agentHref(agentId)}/sources/${enc(stored[1]!)}${query({ page: /, page (\d+)$/.exec(citation.label)?.[1] })}`;
  const turn = /\/threads\/(thread_[0-9A-Z]+)\/observe\/(obs_[0-9A-Z]+)\//.exec(citation.href);
  // A turn's label ends "(turn N)" (1-based).
  const index = Number(/\(turn (\d+)\)$/.exec(citation.label)?.[1] ?? 1) - 1;
  return turn ? turnHref(agentId, turn[1]!, turn[2]!, index) : agentHref(agentId);
}

/** The model's view: for a typed message, exactly the memory context and citations chat would use. */
export async function contextView({ agent: agentId }: Params, search: URLSearchParams): Promise<Child[]> {
  const q = search.get('q') ?? '';
  const asOf = search.get('as_of') ?? '';
  const [recall, agent] = await Promise.all([api().agents.recall({ agentId: agentId!, query: q, ...(asOf ? { as_of: asOf } : {}) }), api().agents.get({ agentId: agentId! })]);
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, "The model's view"),
    contextForm(agentId!, q, asOf),
    h(
      'div',
      { class: 'workbench' },
      h(
        'section',
        { class: 'model-view', 'aria-label': "The model's view" },
        h('p', {}, 'What chat would put before the model for ', h('q', {}, q), asOf ? ` as of ${when(asOf)}` : '', ': the memory context, word for word, and the citations it would give.'),
        h('h2', {}, 'Memory context'),
        recall.memory_context === '' ? h('p', {}, 'No memory context: nothing was retrieved.') : h('pre', { class: 'context' }, recall.memory_context),
        counted('Citations', recall.citations.length),
        citationTable(agentId!, recall.citations),
      ),
      chatPane(agentId!, agent.threads, q, asOf),
    ),
  ];
}

function citationTable(agentId: string, citations: Citation[]): Child {
  return citations.length === 0
    ? h('p', {}, 'No citations.')
    : table(
        ['Citation', 'Kind', 'Verified'],
        citations.map((citation) => [link(citationTarget(agentId, citation), citation.label), citation.media_type, citation.verified ? 'yes' : 'no']),
      );
}

/**
 * The try-out pane: the message sent to chat in a thread the person picks (or a new one), and the
 * agent's answer with its citations beside the model's view. A real chat turn: it is stored in the
 * thread, learned from and charged like any other, so it is sent only on a click.
 */
function chatPane(agentId: string, threads: Thread[], q: string, asOf: string): HTMLElement {
  const message = h('textarea', { id: 'chat-message', name: 'message', rows: 3, required: true, maxlength: 2000 });
  message.value = q;
  const thread = h('select', { id: 'chat-thread', name: 'thread' }, h('option', { value: '' }, 'A new thread ("Try-out")'), ...threads.map((t) => h('option', { value: t.thread_id }, t.title)));
  const answer = h('div', { class: 'chat-answer', 'aria-live': 'polite' });
  const send = h('button', { type: 'submit' }, 'Ask the agent');
  const form = h(
    'form',
    {
      class: 'chat-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        send.disabled = true;
        replace(answer, h('p', { class: 'loading' }, 'Asking…'));
        try {
          const threadId = thread.value || (await api().threads.create({ agentId, title: 'Try-out' })).thread_id;
          if (!thread.value) thread.append(h('option', { value: threadId, selected: true }, 'Try-out'));
          const reply = await api().threads.chat({ agentId, threadId, turn_id: `inspector-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`, message: message.value, ...(asOf ? { as_of: asOf } : {}) });
          replace(
            answer,
            h('h3', {}, 'The answer'),
            h('blockquote', { class: 'chat-reply' }, reply.message),
            facts([
              ['Thread', link(threadHref(agentId, threadId), thread.selectedOptions[0]?.textContent ?? 'Try-out')],
              ['Model', reply.model],
              ['Took', `${reply.duration_ms} ms`],
            ]),
            h('h3', {}, 'Citations ', h('span', { class: 'count' }, `(${reply.citations.length})`)),
            citationTable(agentId, reply.citations),
          );
        } catch (error) {
          replace(answer);
          actionFailed(error);
        } finally {
          send.disabled = false;
        }
      },
    },
    h('label', { for: 'chat-message' }, 'Message to the agent'),
    message,
    h('label', { for: 'chat-thread' }, 'In thread'),
    thread,
    send,
  );
  return h(
    'section',
    { class: 'chat-pane', 'aria-label': 'Try it in chat' },
    h('h2', {}, 'Try it in chat'),
    h('p', { class: 'hint' }, 'Sends the message to chat: the agent answers from memory with citations. It is a real turn: stored in the thread, learned from and charged.'),
    form,
    answer,
  );
}

