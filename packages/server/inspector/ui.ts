// What every view of the inspector shares: the page's fixed parts, the notice line, links and
// readable names for ids, a confirmation step, and where a memory came from.
import type { Memory, Schemas } from '@memory-agents/client';
import { ApiError, enc, KeyRefused, session } from './api.js';
import { h, replace, table, when, type Child } from './dom.js';

export const main = document.getElementById('main') as HTMLElement;
export const nav = document.getElementById('nav') as HTMLElement;
const notice = document.getElementById('notice') as HTMLElement;

export type Params = Record<string, string>;
export type View = (params: Params, search: URLSearchParams, rerender: () => void) => Promise<Child[]>;

export const link = (href: string, ...children: Child[]) => h('a', { href }, ...children);
export const agentHref = (agent: string) => `#/agents/${enc(agent)}`;
export const threadHref = (agent: string, thread: string) => `${agentHref(agent)}/threads/${enc(thread)}`;
export const memoryHref = (agent: string, memory: string) => `${agentHref(agent)}/memories/${enc(memory)}`;
/** Agents' readable names (their role) as the agent pages read them, for the crumbs of other pages. */
export const agentNames = new Map<string, string>();
/** The crumb back to an agent: its name when this tab has read it. */
export const agentCrumb = (agent: string) => h('a', { href: agentHref(agent) }, agentNames.get(agent) ?? 'Agent');
/** The thread page opened at one observed turn (`turn-<obs>-<index>` there). */
export const turnHref = (agent: string, thread: string, observation: string, turnIndex: number) => `${threadHref(agent, thread)}?turn=${enc(`${observation}.${turnIndex}`)}`;
export const turnAnchor = (observation: string, turnIndex: number) => `turn-${observation}-${turnIndex}`;
/** A document (its upload's observation) opened at a page (and one piece marked), `document.ts`. */
export const documentHref = (agent: string, thread: string, observation: string, page?: number | null, piece?: number | null) => {
  const base = `${threadHref(agent, thread)}/documents/${enc(observation)}`;
  const params = [page != null ? `page=${page}` : '', piece != null ? `piece=${piece}` : ''].filter(Boolean).join('&');
  return params ? `${base}?${params}` : base;
};

let keepNotice = false;

/** Says `message` in the notice line; `afterNavigation` keeps it through the next page change. */
export function say(message: string | Node, kind: 'info' | 'error' = 'info', afterNavigation = false): void {
  replace(notice, message);
  notice.className = message === '' ? '' : `notice ${kind}`;
  keepNotice = afterNavigation;
}

/** A page change clears the notice, unless it was said to survive this one. */
export function navigated(): void {
  if (keepNotice) keepNotice = false;
  else say('');
}

let rerender: () => void = () => undefined;
export const onRerender = (render: () => void): void => void (rerender = render);

/** A refused key signs the tab out; any other failure of an action is said in the notice line. */
export function actionFailed(error: unknown): void {
  if (error instanceof KeyRefused) {
    session.signOut();
    say(`The key was refused: ${error.message} Sign in again with a valid key.`, 'error', true);
    rerender();
    return;
  }
  say(error instanceof ApiError ? `${error.message} (${error.status} ${error.code})` : String(error), 'error');
}

/** `agent_…3F9QZK`: the prefix and the last six characters, the whole id in its title. */
export function shortId(id: string): HTMLElement {
  const cut = id.indexOf('_');
  const short = id.length > 14 && cut > 0 ? `${id.slice(0, cut + 1)}…${id.slice(-6)}` : id;
  return h('code', { class: 'id', title: id }, short);
}

/** A short id with a button that copies the whole id. */
export function idWithCopy(id: string): HTMLElement {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'copy',
      'aria-label': `Copy ${id}`,
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(id);
          say(`Copied ${id}.`);
        } catch {
          say(`Copy this id: ${id}`);
        }
      },
    },
    'Copy',
  );
  return h('span', { class: 'id-copy' }, shortId(id), ' ', button);
}

/**
 * An action behind a confirmation: the first button only asks, and the action runs on the second
 * (both plain buttons, so the keyboard reaches them; the focus moves to the one that acts).
 */
export function confirmed(label: string, question: string, confirmLabel: string, action: () => Promise<void>, before: Child[] = [], ready: () => boolean = () => true): HTMLElement {
  const box = h('div', { class: 'erase' });
  const start = h('button', {
    type: 'button',
    class: 'danger',
    onclick: () => {
      if (!ready()) return;
      const go = h('button', {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          go.disabled = true;
          try {
            await action();
          } catch (error) {
            go.disabled = false;
            actionFailed(error);
          }
        },
      }, confirmLabel);
      const cancel = h('button', { type: 'button', onclick: () => (replace(box, ...before, start), start.focus()) }, 'Cancel');
      replace(box, h('p', { role: 'alert' }, question), go, ' ', cancel);
      go.focus();
    },
  }, label);
  replace(box, ...before, start);
  return box;
}

/** Where a memory came from: the observed turn (its anchor on the thread page), or a document opened at its page. */
export function sourceLink(agentId: string, source: Schemas['MemorySource'] | null | undefined): Child {
  if (!source?.thread_id) return '';
  if (source.kind === 'document') {
    const where = `${source.filename}${source.page ? `, page ${source.page}` : ''}, piece ${Number(source.piece) + 1}`;
    return link(documentHref(agentId, source.thread_id, source.observation_id, source.page, Number(source.piece)), where);
  }
  return link(turnHref(agentId, source.thread_id, source.observation_id, Number(source.turn_index)), `turn ${Number(source.turn_index) + 1} of observation ${short(source.observation_id)}`);
}

/** The short form of an id as text (for link text that must stay readable). */
export const short = (id: string): string => shortId(id).textContent ?? id;

/** Whether a memory is history: superseded, or no longer valid. */
export const isHistory = (memory: Pick<Memory, 'superseded_by' | 'valid_to'>): boolean => Boolean(memory.superseded_by || memory.valid_to);

export function memoryTable(agentId: string, memories: Memory[], caption?: string): Child {
  if (memories.length === 0) return h('p', {}, 'No memories match.');
  return table(
    ['Memory', 'Speaker', 'Learned', 'From'],
    memories.map((memory) => [
      h('span', {}, link(memoryHref(agentId, memory.memory_id), memory.text), memory.pinned ? h('span', { class: 'badge pinned' }, 'pinned') : null, isHistory(memory) ? h('span', { class: 'tag' }, ` history: until ${when(memory.valid_to)}`) : null),
      memory.speaker ?? '',
      when(memory.learned_at),
      sourceLink(agentId, memory.source),
    ]),
    caption,
  );
}

/** `Threads (3)`: a heading with its count. */
export const counted = (title: string, count: number | string) => h('h2', {}, title, ' ', h('span', { class: 'count' }, `(${count})`));
