// A thread: its conversation (the observed turns, in order, each with the memories learned from it),
// chat messages, observation jobs with their receipts, documents; and an observation's receipt.
import type { Memory, ObservationStatus, Schemas } from '@memory-agents/client';
import { api, ApiError, enc, KeyRefused, query } from './api.js';
import { facts, h, table, when, type Child } from './dom.js';
import { eraseForm } from './erase.js';
import { agentCrumb, agentHref, counted, documentHref, idWithCopy, isHistory, link, memoryHref, short, threadHref, turnAnchor, type Params } from './ui.js';

type ThreadTurn = Schemas['ThreadTurn'];

const TURNS_PAGE = 100;
/** Pages of an observation's memories read to put beside its turns (100 each). */
const MEMORY_PAGES = 10;

const FINAL_STATUSES = ['committed', 'failed', 'cancelled'];
const receiptHref = (agent: string, thread: string, observation: string) => `${threadHref(agent, thread)}/observations/${enc(observation)}/receipt`;

/**
 * The memories learned from the observations on this page (history included), by the turn each came
 * from or was merged from (`obs.index`): per observation, pages of 100 until none is left or
 * {@link MEMORY_PAGES} were read.
 */
async function memoriesByTurn(agentId: string, threadId: string, observationIds: string[]): Promise<Map<string, Memory[]>> {
  const byTurn = new Map<string, Memory[]>();
  const lists = await Promise.all(
    observationIds.map(async (observationId) => {
      const found: Memory[] = [];
      let cursor = '';
      for (let page = 0; page < MEMORY_PAGES; page++) {
        const list = await api().memories.list({ agentId, observation_id: observationId, include_history: true, limit: 100, cursor: cursor || undefined });
        found.push(...list.memories);
        cursor = list.next_cursor ?? '';
        if (!cursor) break;
      }
      return found;
    }),
  );
  for (const memory of lists.flat()) {
    for (const source of [memory.source, ...(memory.also_from ?? [])]) {
      if (!source?.observation_id || source.thread_id !== threadId) continue;
      const key = `${source.observation_id}.${source.turn_index}`;
      byTurn.set(key, [...(byTurn.get(key) ?? []), memory]);
    }
  }
  return byTurn;
}

function turnItem(agentId: string, threadId: string, turn: ThreadTurn, memories: Memory[], target: boolean): HTMLElement {
  const doc = turn.document;
  const where = doc ? `${doc.filename ?? 'document'}${doc.page ? `, page ${doc.page}${doc.page_end && doc.page_end !== doc.page ? `-${doc.page_end}` : ''}` : ''}, piece ${Number(doc.piece) + 1}` : null;
  const learning = turn.learning === 'not_learned' ? `not learned (${turn.not_learned_reason})` : turn.learning;
  return h(
    'li',
    { id: turnAnchor(turn.observation_id, turn.turn_index), class: target ? 'turn target' : 'turn', tabindex: '-1', 'data-turn': `${turn.observation_id}.${turn.turn_index}` },
    h(
      'div',
      { class: 'turn-head' },
      h('span', { class: 'speaker' }, turn.speaker),
      ' ',
      h('span', { class: 'time' }, `turn ${turn.turn_index + 1} · ${when(turn.timestamp)} · ${learning}`),
      doc && where ? h('span', { class: 'time' }, ' · ', link(documentHref(agentId, threadId, turn.observation_id, doc.page, doc.piece), where)) : null,
    ),
    h('p', {}, turn.text),
    memories.length === 0
      ? null
      : h(
          'ul',
          { class: 'turn-memories', 'aria-label': `Memories from turn ${turn.turn_index + 1}` },
          ...memories.map((memory) => h('li', {}, link(memoryHref(agentId, memory.memory_id), memory.text), isHistory(memory) ? h('span', { class: 'tag' }, ' history') : null)),
        ),
  );
}

/** The observed turns, grouped by observation (a heading with its receipt), oldest first. */
function conversation(agentId: string, threadId: string, turns: ThreadTurn[], observations: Map<string, ObservationStatus>, byTurn: Map<string, Memory[]>, target: string): Child[] {
  const groups: Child[] = [];
  let list: HTMLOListElement | null = null;
  let current = '';
  for (const turn of turns) {
    if (turn.observation_id !== current) {
      current = turn.observation_id;
      const observation = observations.get(current);
      groups.push(
        h(
          'h3',
          { class: 'observation' },
          `Observation ${short(current)}`,
          h('span', { class: 'time' }, ` · ${turn.kind}${observation ? ` · ${observation.status}` : ''} `),
          observation && FINAL_STATUSES.includes(observation.status) ? link(receiptHref(agentId, threadId, current), 'Receipt') : null,
        ),
      );
      list = h('ol', { class: 'messages turns', start: turn.turn_index + 1 });
      groups.push(list);
    }
    const key = `${turn.observation_id}.${turn.turn_index}`;
    list!.append(turnItem(agentId, threadId, turn, byTurn.get(key) ?? [], key === target));
  }
  return groups;
}

export async function threadView({ agent: agentId, thread: threadId }: Params, search: URLSearchParams): Promise<Child[]> {
  const ids = { agentId: agentId!, threadId: threadId! };
  const target = search.get('turn') ?? '';
  const cursor = search.get('cursor') ?? '';
  const [thread, observations, sources, firstTurns] = await Promise.all([
    api().threads.get(ids),
    api().threads.listObservations({ ...ids, limit: 100 }),
    api().sources.list(ids),
    api().threads.turns({ ...ids, limit: TURNS_PAGE, cursor: cursor || undefined }),
  ]);
  let turns = firstTurns;
  // A link to one turn that is not on this page: that observation's turns, whole.
  let narrowed = '';
  let missing = false;
  const [targetObservation = ''] = target.split('.');
  if (target !== '' && !turns.turns.some((turn) => `${turn.observation_id}.${turn.turn_index}` === target)) {
    try {
      if (!/^obs_[0-9A-Z]{26}$/.test(targetObservation)) throw new ApiError(404, 'not_found', 'no such observation');
      turns = await api().threads.turns({ ...ids, observation_id: targetObservation, limit: 200 });
      narrowed = targetObservation;
    } catch (error) {
      // An erased observation, or a link naming none of this thread's: the conversation, and a word.
      if (!(error instanceof ApiError) || error instanceof KeyRefused || error.status !== 404) throw error;
      missing = true;
    }
    missing ||= !turns.turns.some((turn) => `${turn.observation_id}.${turn.turn_index}` === target);
  }
  const byId = new Map(observations.observations.map((o) => [o.observation_id, o]));
  const messages = thread.messages ?? [];
  const byTurn = await memoriesByTurn(agentId!, threadId!, [...new Set<string>(turns.turns.map((turn) => turn.observation_id))]);
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, thread.title),
    facts([
      ['Thread', idWithCopy(thread.thread_id)],
      ['Status', thread.status],
      ['Created', when(thread.created_at)],
    ]),
    counted('Conversation', `${turns.total} turn${turns.total === 1 ? '' : 's'}${narrowed ? ' in this observation' : ''}`),
    missing ? h('p', { class: 'notice error' }, 'The turn this link names is not in this thread (it was erased, or the link is wrong).') : null,
    narrowed ? h('p', { class: 'hint' }, `Only observation ${short(narrowed)} is shown. `, link(threadHref(agentId!, threadId!), 'Show the whole conversation.')) : null,
    turns.turns.length === 0 ? h('p', {}, 'No observed turns.') : null,
    ...conversation(agentId!, threadId!, turns.turns, byId, byTurn, target),
    !narrowed && turns.next_cursor ? h('p', {}, link(`${threadHref(agentId!, threadId!)}${query({ cursor: turns.next_cursor })}`, 'Later turns →')) : null,
    counted('Messages', messages.length),
    messages.length === 0
      ? h('p', {}, 'No messages.')
      : h('ol', { class: 'messages' }, ...messages.map((message) => h('li', {}, h('span', { class: 'speaker' }, message.speaker), ' ', h('span', { class: 'time' }, when(message.timestamp)), h('p', {}, message.text)))),
    counted('Observations', `${observations.observations.length}${observations.next_cursor ? '+' : ''}`),
    observations.observations.length === 0
      ? h('p', {}, 'No observations.')
      : table(
          ['Observation', 'Status', 'Turns', 'Learning report', 'Receipt'],
          observations.observations.map((o) => [
            h('span', { id: o.observation_id }, idWithCopy(o.observation_id)),
            o.status,
            `${o.turns_processed} / ${o.turns_total}`,
            o.learning ? `${o.learning.message} (turns ${o.learning.not_learned_turns.map((r) => (r.first === r.last ? r.first : `${r.first}-${r.last}`)).join(', ')}; ${o.learning.reason})` : o.error ?? '',
            FINAL_STATUSES.includes(o.status) ? link(receiptHref(agentId!, threadId!, o.observation_id), 'Receipt') : '',
          ]),
        ),
    counted('Documents', sources.sources.length),
    sources.sources.length === 0
      ? h('p', {}, 'No documents.')
      : table(
          ['Document', 'State', 'Pieces learned', 'Erase'],
          sources.sources.map((source) => [link(documentHref(agentId!, threadId!, source.observation_id), source.filename), source.document_state, `${source.turns_learned} / ${source.turns_total}`, source.source_id ? eraseForm(agentId!, 'source_id', `everything learned from ${source.filename}`, source.source_id) : '']),
        ),
    h('h2', {}, 'Erase this thread'),
    eraseForm(agentId!, 'thread_id', 'every memory, message and stored original learned in this thread', threadId!),
  ];
}

/** `model: 1200 in / 80 out` per model (embedders: input only), `; `-separated; empty when none. */
const modelTokens = (entries: { model: string; input_tokens: number; output_tokens: number }[]) =>
  entries.map((entry) => `${entry.model}: ${entry.input_tokens} in${entry.output_tokens > 0 ? ` / ${entry.output_tokens} out` : ''}`).join('; ');

/** A finished observation's receipt: per turn what was learned, merged, superseded or skipped, its model tokens and its credits. */
export async function receiptView({ agent: agentId, thread: threadId, observation: observationId }: Params): Promise<Child[]> {
  const receipt = await api().threads.observationReceipt({ agentId: agentId!, threadId: threadId!, observationId: observationId! });
  const memoryLinks = (ids: string[]) => (ids.length === 0 ? '' : h('span', {}, ...ids.flatMap((id, i) => [i > 0 ? ', ' : null, link(memoryHref(agentId!, id), short(id))])));
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!), ' / ', link(threadHref(agentId!, threadId!), 'Thread')),
    h('h1', { tabindex: '-1' }, 'Receipt'),
    facts([
      ['Observation', idWithCopy(receipt.observation_id)],
      ['Status', receipt.status],
      ['Net credits', receipt.net_credits],
      ['Ledger entries', receipt.ledger_entries.map((entry) => `#${entry.entry_id} ${entry.kind} ${entry.cost}`).join(', ')],
      ['Ended without successor', receipt.superseded_without_successor.length > 0 ? memoryLinks(receipt.superseded_without_successor) : null],
      ['Model tokens', modelTokens(receipt.model_tokens) || 'none reported'],
    ]),
    table(
      ['Turn', 'Outcome', 'Memories written or merged into', 'Superseded', 'Model tokens', 'Charged', 'Refunded', 'Ledger entries'],
      receipt.turns.map((turn) => [
        link(`${threadHref(agentId!, threadId!)}?turn=${enc(`${observationId}.${turn.turn_index}`)}`, String(turn.turn_index + 1)),
        turn.outcome === 'learned' ? 'learned' : turn.outcome === 'merged' ? 'merged (a near-duplicate of an existing memory)' : `skipped (${turn.reason})`,
        memoryLinks(turn.memory_ids),
        memoryLinks(turn.superseded),
        modelTokens(turn.model_tokens),
        turn.charged_credits,
        turn.refunded_credits,
        turn.ledger_entry_ids.map((id: number) => `#${id}`).join(', '),
      ]),
      'Per turn',
    ),
  ];
}
