// The review queue (issue 43): the memories the agent's review_mode held for a person, approved or
// declined ones, each with why it waits, what it would replace, every decision, and the actions its
// state allows. Characters a reader would not see (zero-width, bidi controls) are shown as visible
// markers, never rendered: a right-to-left override cannot reorder the text around it here.
import type { Schemas } from '@memory-agents/client';
import { api, query } from './api.js';
import { h, replace, table, when, type Child } from './dom.js';
import { actionFailed, agentCrumb, agentHref, counted, idWithCopy, link, memoryHref, say, type Params } from './ui.js';

type Item = Schemas['ReviewItem'];
type State = Item['state'];

const STATES: [State, string][] = [
  ['pending', 'Waiting'],
  ['approved', 'Approved'],
  ['declined', 'Declined'],
];

export const reviewHref = (agent: string, state?: State) => `${agentHref(agent)}/review${state && state !== 'pending' ? query({ state }) : ''}`;

/** The text with each hidden character replaced by a marker naming it (`⟦U+202E right-to-left override⟧`). */
export function withMarkers(text: string, hidden: Item['hidden_characters']): Child {
  if (hidden.length === 0) return text;
  const parts: Child[] = [];
  let at = 0;
  for (const character of hidden) {
    parts.push(text.slice(at, character.index), h('mark', { class: 'hidden-char', title: character.name }, `⟦${character.code_point} ${character.name}⟧`));
    at = character.index + String.fromCodePoint(Number.parseInt(character.code_point.slice(2), 16)).length;
  }
  parts.push(text.slice(at));
  return h('span', { class: 'marked' }, ...parts);
}

/** The agent page's line: how many memories wait, and the way to the queue. */
export async function reviewSummary(agentId: string): Promise<Child[]> {
  const waiting = await api().review.list({ agentId, limit: 100 });
  const count = `${waiting.items.length}${waiting.next_cursor ? '+' : ''}`;
  return [
    h('p', {}, link(reviewHref(agentId), `Review queue: ${count} waiting for approval →`)),
  ];
}

function decisionText(item: Item): string {
  const last = item.decisions.at(-1);
  if (!last) return '';
  return `${last.action} by ${last.by}, ${when(last.at)}${last.reason ? `: ${last.reason}` : ''}`;
}

/** The buttons (and fields) a memory in this state can take. */
function actions(agentId: string, item: Item, rerender: () => void): Child {
  const memoryId = item.memory.memory_id;
  const run = (label: string, button: HTMLButtonElement, call: () => Promise<Item>) => async () => {
    button.disabled = true;
    try {
      const done = await call();
      say(`${label}: ${done.memory.memory_id} is now ${done.state}.`, 'info', true);
      rerender();
    } catch (error) {
      button.disabled = false;
      actionFailed(error);
    }
  };
  const button = (label: string, call: () => Promise<Item>, kind = '') => {
    const element = h('button', { type: 'button', class: kind }, label);
    element.addEventListener('click', run(label, element, call));
    return element;
  };
  if (item.state !== 'pending') return h('div', { class: 'actions' }, button('Undo', () => api().review.undo({ agentId, memoryId })));
  const reason = h('input', { type: 'text', id: `reason-${memoryId}`, name: 'reason', maxlength: 500, placeholder: 'why (optional)', size: 16, 'aria-label': 'Reason to decline' });
  const text = h('textarea', { id: `text-${memoryId}`, name: 'text', rows: 2, cols: 40, maxlength: 4000, 'aria-label': 'New text' }, item.memory.text);
  const editor = h('details', {}, h('summary', {}, 'Edit the text'), text, button('Save text', () => api().review.edit({ agentId, memoryId, text: text.value })));
  return h(
    'div',
    { class: 'actions' },
    button('Approve', () => api().review.approve({ agentId, memoryId })),
    ' ',
    reason,
    button('Decline', () => api().review.decline({ agentId, memoryId, ...(reason.value.trim() ? { reason: reason.value.trim() } : {}) }), 'danger'),
    editor,
  );
}

/** `#/agents/{agent}/review[?state=]`: one state's memories, oldest proposal first, a page of 50. */
export async function reviewView({ agent: agentId }: Params, search: URLSearchParams, rerender: () => void): Promise<Child[]> {
  const state = (STATES.find(([value]) => value === search.get('state'))?.[0] ?? 'pending') as State;
  const cursor = search.get('cursor') ?? '';
  const page = await api().review.list({ agentId: agentId!, state, limit: 50, cursor: cursor || undefined });
  const tabs = h('p', { class: 'tabs' }, ...STATES.flatMap(([value, label]) => [value === state ? h('strong', {}, label) : link(reviewHref(agentId!, value), label), ' ']));
  const rows = page.items.map((item) => [
    h('div', {}, withMarkers(item.memory.text, item.hidden_characters), item.hidden_characters.length > 0 ? h('p', { class: 'error' }, `${item.hidden_characters.length} hidden character${item.hidden_characters.length === 1 ? '' : 's'} shown as markers`) : null),
    item.memory.speaker ?? '',
    item.held_as === 'inferred' ? 'inferred (not the speaker\'s words)' : item.held_as === 'relearn' ? 're-learned (reads differently now)' : 'every memory is reviewed',
    h('div', {}, ...item.supersedes.map((id) => h('div', {}, link(memoryHref(agentId!, id), id)))),
    h('div', {}, when(item.proposed_at), h('div', { class: 'hint' }, idWithCopy(item.memory.memory_id))),
    decisionText(item),
    actions(agentId!, item, rerender),
  ]);
  const list = h('div', {});
  replace(
    list,
    page.items.length === 0
      ? h('p', {}, state === 'pending' ? 'Nothing waits for review.' : `No ${state} memories.`)
      : table(['Memory', 'Speaker', 'Held because', 'Would replace', 'Proposed', 'Last decision', 'Decide'], rows),
  );
  // Reflection (a language model proposes facts the memories imply together; each lands here pending).
  const reflect = h('button', { type: 'button' }, 'Ask the model for proposals');
  reflect.addEventListener('click', async () => {
    reflect.disabled = true;
    try {
      const done = await api().review.reflect({ agentId: agentId! });
      say(`${done.model} read ${done.memories_read} memories and proposed ${done.proposals.length}.`, 'info', true);
      rerender();
    } catch (error) {
      reflect.disabled = false;
      actionFailed(error);
    }
  });
  // Re-learning (the turns learned again under the current writer and policy; what reads differently lands here).
  const relearn = h('button', { type: 'button' }, 'Re-learn every thread');
  relearn.addEventListener('click', async () => {
    relearn.disabled = true;
    try {
      const done = await api().review.relearn({ agentId: agentId!, max_turns: 2000 });
      const more = done.next_cursor === null ? '' : ' More turns remain: re-learn again to continue.';
      say(`${done.writer} read ${done.turns_read} turns: ${done.unchanged_turns} unchanged, ${done.proposals.length} memories proposed.${more}`, 'info', true);
      rerender();
    } catch (error) {
      relearn.disabled = false;
      actionFailed(error);
    }
  });
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, 'Review queue'),
    h('p', { class: 'hint' }, `Review mode: ${page.review_mode}. Memories waiting here are hidden from chat, recall and search until approved; a declined one is never proposed again. Undo works within the restore window.`),
    h('p', {}, reflect, h('span', { class: 'hint' }, ' Needs a server started with a language model; proposals wait here, never used before approval.')),
    h('p', {}, relearn, h('span', { class: 'hint' }, ' Learns the turns again under the current writer and policy; memories that read differently wait here.')),
    tabs,
    counted(STATES.find(([value]) => value === state)![1], `${page.items.length}${page.next_cursor ? '+' : ''}`),
    list,
    page.next_cursor ? h('p', {}, link(`${agentHref(agentId!)}/review${query({ state: state === 'pending' ? undefined : state, cursor: page.next_cursor })}`, 'More →')) : null,
  ];
}
