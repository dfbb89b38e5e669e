// The inspector: a small page over the server's own /v1 API that lets a person see what an agent
// knows, why a memory ranked, where it came from (the words of the turn), what the model would get,
// and erase it. No framework, no network but the server it came from; every value is rendered as
// text (dom.ts). The views live in thread.ts, memory.ts and erase.ts; what they share in ui.ts.
import { api, ApiError, KeyRefused, query, session } from './api.js';
import { append, facts, h, replace, table, when, type Child } from './dom.js';
import { chartsView, creditsChart, ledger } from './charts.js';
import { documentView, sourceView } from './document.js';
import { eraseForm, erasureView } from './erase.js';
import { maintenanceRunView, maintenanceSection } from './maintenance.js';
import { reviewSummary, reviewView } from './review.js';
import { memoryView } from './memory.js';
import { contextForm, contextView, searchForm, searchView } from './search.js';
import { peopleView, personView } from './people.js';
import { decaySummary, redactionSummary, settingsForm } from './settings.js';
import { receiptView, threadView } from './thread.js';
import { agentHref, agentNames, counted, idWithCopy, link, main, memoryTable, nav, navigated, onRerender, say, threadHref, type Params, type View } from './ui.js';

const ROUTES: [RegExp, View][] = [
  [/^\/$/, agentsView],
  [/^\/billing$/, billingView],
  [/^\/agents\/(?<agent>[^/]+)$/, agentView],
  [/^\/agents\/(?<agent>[^/]+)\/threads\/(?<thread>[^/]+)$/, threadView],
  [/^\/agents\/(?<agent>[^/]+)\/threads\/(?<thread>[^/]+)\/observations\/(?<observation>[^/]+)\/receipt$/, receiptView],
  [/^\/agents\/(?<agent>[^/]+)\/threads\/(?<thread>[^/]+)\/documents\/(?<observation>[^/]+)$/, documentView],
  [/^\/agents\/(?<agent>[^/]+)\/memories\/(?<memory>[^/]+)$/, memoryView],
  [/^\/agents\/(?<agent>[^/]+)\/search$/, searchView],
  [/^\/agents\/(?<agent>[^/]+)\/charts$/, chartsView],
  [/^\/agents\/(?<agent>[^/]+)\/sources\/(?<source>[^/]+)$/, sourceView],
  [/^\/agents\/(?<agent>[^/]+)\/context$/, contextView],
  [/^\/agents\/(?<agent>[^/]+)\/people$/, peopleView],
  [/^\/agents\/(?<agent>[^/]+)\/people\/(?<person>[^/]+)$/, personView],
  [/^\/agents\/(?<agent>[^/]+)\/erasures\/(?<erasure>[^/]+)$/, erasureView],
  [/^\/agents\/(?<agent>[^/]+)\/maintenance\/(?<run>[^/]+)$/, maintenanceRunView],
  [/^\/agents\/(?<agent>[^/]+)\/review$/, reviewView],
];

const reembedding = document.getElementById('reembedding') as HTMLElement;
let reembedTimer: ReturnType<typeof setTimeout> | null = null;

/**
 * "re-embedding: N of M memories" while the server re-embeds its memory index for a new embedder
 * (issue 39), from `GET /readyz` (no key, nothing of any organization); looked at again every few
 * seconds until it is done, then the line goes.
 */
async function showReembedding(): Promise<void> {
  if (reembedTimer !== null) clearTimeout(reembedTimer);
  reembedTimer = null;
  let progress: { done: number; total: number; from: string; to: string } | undefined;
  try {
    const response = await fetch('/readyz', { cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });
    progress = ((await response.json()) as { reembedding?: typeof progress }).reembedding;
  } catch {
    progress = undefined;
  }
  if (!progress) {
    reembedding.hidden = true;
    replace(reembedding);
    return;
  }
  replace(reembedding, `re-embedding: ${progress.done} of ${progress.total} memories`, h('span', { class: 'hint' }, ` (${progress.from} → ${progress.to}; search uses full text and learning waits until it finishes)`));
  reembedding.hidden = false;
  reembedding.className = 'notice info';
  reembedTimer = setTimeout(() => void showReembedding(), 3000);
}

/** Counts page changes: a page that finishes loading after a newer one started is not shown. */
let renders = 0;

async function render(): Promise<void> {
  const generation = ++renders;
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?');
  if (session.key() === null) return renderSignIn();
  void showReembedding();
  replace(nav, link('#/', 'Agents'), ' ', link('#/billing', 'Billing'), ' ', h('button', { type: 'button', class: 'link', onclick: signOut }, 'Sign out'));
  for (const [pattern, view] of ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    const params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([name, value]) => [name, decodeURIComponent(value)]));
    replace(main, h('p', { class: 'loading' }, 'Loading…'));
    try {
      const children = await view(params, new URLSearchParams(search), () => void render());
      if (generation !== renders) return;
      replace(main, ...children);
    } catch (error) {
      if (generation !== renders) return;
      return failed(error);
    }
    focusHeading();
    return;
  }
  replace(main, h('h1', { tabindex: '-1' }, 'Not found'), h('p', {}, 'Nothing is at this address. ', link('#/', 'Back to the agents.')));
  focusHeading();
}

/**
 * After each page change the heading takes the focus, so keyboard and screen-reader users start
 * there; a page opened at one turn of a conversation (`?turn=`) gives it to that turn instead.
 */
function focusHeading(): void {
  const target = main.querySelector<HTMLElement>('.turn.target');
  if (target) {
    target.focus();
    target.scrollIntoView({ block: 'center' });
    return;
  }
  main.querySelector<HTMLElement>('h1')?.focus();
}

function failed(error: unknown): void {
  if (error instanceof KeyRefused) {
    session.signOut();
    say(`The key was refused: ${error.message} Sign in again with a valid key.`, 'error');
    void render();
    return;
  }
  const message = error instanceof ApiError ? `${error.message} (${error.status} ${error.code})` : String(error);
  replace(main, h('h1', { tabindex: '-1' }, 'Could not load this page'), h('p', { class: 'error' }, message), h('p', {}, link('#/', 'Back to the agents.')));
  focusHeading();
}

function signOut(): void {
  session.signOut();
  say('Signed out. The key was removed from this tab.');
  void render();
}

function renderSignIn(): void {
  replace(nav);
  const input = h('input', { id: 'key', name: 'key', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'sp_…' });
  const form = h(
    'form',
    {
      class: 'sign-in',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const key = input.value.trim();
        try {
          const who = await api(key).session.get();
          session.signIn(key);
          const home = location.hash === '' || location.hash === '#/';
          say(`Signed in to ${who.organization_name}.`, 'info', !home);
          if (home) void render();
          else location.hash = '#/';
        } catch (error) {
          say(error instanceof ApiError ? `The key was refused: ${error.message}` : String(error), 'error');
          input.focus();
        }
      },
    },
    h('label', { for: 'key' }, 'API key'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
    h('p', { class: 'hint' }, 'The key stays in this tab only (session storage) and is sent to this server alone.'),
  );
  replace(main, h('h1', { tabindex: '-1' }, 'Sign in'), form);
  input.focus();
}

async function agentsView(): Promise<Child[]> {
  const agents = await api().agents.list();
  for (const agent of agents) agentNames.set(agent.agent_id, agent.agent_config?.role || 'Agent');
  return [
    h('h1', { tabindex: '-1' }, 'Agents', ' ', h('span', { class: 'count' }, `(${agents.length})`)),
    agents.length === 0
      ? h('p', {}, 'This organization has no agents yet.')
      : table(
          ['Agent', 'Id', 'Status', 'Created'],
          agents.map((agent) => [link(agentHref(agent.agent_id), agent.agent_config?.role || 'Agent'), idWithCopy(agent.agent_id), agent.status, when(agent.created_at)]),
        ),
  ];
}

async function agentView({ agent: agentId }: Params, search: URLSearchParams, rerender: () => void): Promise<Child[]> {
  const contains = search.get('contains') ?? '';
  const cursor = search.get('cursor') ?? '';
  const history = search.get('history') === '1';
  const [agent, memories, maintenance, review] = await Promise.all([
    api().agents.get({ agentId: agentId! }),
    api().memories.list({ agentId: agentId!, limit: 20, text_contains: contains || undefined, include_history: history || undefined, cursor: cursor || undefined }),
    maintenanceSection(agentId!),
    reviewSummary(agentId!),
  ]);
  agentNames.set(agent.agent_id, agent.agent_config?.role || 'Agent');
  const filterInput = h('input', { id: 'contains', name: 'contains', type: 'search', value: contains });
  const historyBox = h('input', { id: 'history', name: 'history', type: 'checkbox', checked: history, class: 'check' });
  const filter = h('form', {
    class: 'inline',
    role: 'search',
    onsubmit: (event: Event) => {
      event.preventDefault();
      location.hash = `${agentHref(agentId!)}${query({ contains: filterInput.value, history: historyBox.checked ? 1 : undefined })}`;
    },
  });
  append(filter, [h('label', { for: 'contains' }, 'Memories containing'), filterInput, h('label', { class: 'check-label' }, historyBox, ' Include history (superseded memories)'), h('button', { type: 'submit' }, 'Filter')]);
  const list = memories.memories ?? [];
  return [
    h('h1', { tabindex: '-1' }, agent.agent_config?.role ?? 'Agent'),
    facts([
      ['Agent', idWithCopy(agent.agent_id)],
      ['Status', agent.status],
      ['Objective', agent.agent_config?.objective],
      // Issue 42: whose memories a person's requests read.
      ['Memory scope', agent.agent_config?.memory_scope === 'end_user' ? "per person (end_user): each person reads their own threads' memories and shared ones" : 'shared (agent): every person reads every memory'],
      // Issue 44: what every turn has redacted before it is stored.
      ['Redacted before storing', redactionSummary(agent.agent_config)],
      // Issue 42: how memories' scores fade with age.
      ['Memory decay', decaySummary(agent.agent_config)],
      // Issue 43: which new memories wait for a person's approval.
      ['Review mode', agent.agent_config?.review_mode ?? 'off'],
      ['Created', when(agent.created_at)],
    ]),
    ...review,
    h('p', {}, link(`${agentHref(agentId!)}/people`, 'People: who used this agent, and what it knows about each →')),
    h('p', {}, link(`${agentHref(agentId!)}/charts`, 'Over time: memories learned per day →')),
    counted('Threads', agent.threads.length),
    agent.threads.length === 0
      ? h('p', {}, 'No threads.')
      : table(
          ['Thread', 'Id', 'Status', 'Updated'],
          agent.threads.map((thread) => [link(threadHref(agentId!, thread.thread_id), thread.title), idWithCopy(thread.thread_id), thread.status, when(thread.updated_at)]),
        ),
    // The API gives no total of memories: a page of 20, and "+" when older ones follow.
    counted('Memories', `${list.length}${memories.next_cursor ? '+' : ''}${history ? ', history included' : ''}`),
    searchForm(agentId!),
    filter,
    memoryTable(agentId!, list),
    memories.next_cursor ? h('p', {}, link(`${agentHref(agentId!)}${query({ contains, history: history ? 1 : undefined, cursor: memories.next_cursor })}`, 'Older memories →')) : null,
    h('h2', {}, "The model's view"),
    h('p', { class: 'hint' }, 'For a message, the exact memory context and citations chat would give the model (nothing is learned or charged).'),
    contextForm(agentId!),
    ...maintenance,
    h('h2', {}, 'Settings'),
    settingsForm(agent, rerender),
    h('h2', {}, 'Erase what a person said'),
    eraseForm(agentId!, 'end_user_id', 'everything learned from the threads of this person (their X-SP-End-User id)'),
  ];
}

async function billingView(_: Params, search: URLSearchParams): Promise<Child[]> {
  const cursor = search.get('cursor') ?? '';
  const [billing, all] = await Promise.all([api().billing.get({ limit: 50, cursor: cursor || undefined }), ledger()]);
  return [
    h('h1', { tabindex: '-1' }, 'Billing'),
    facts([
      ['Organization', billing.organization_id],
      ['Billing', billing.enabled ? 'on' : 'off'],
      ['Balance', billing.balance ?? 'none'],
      ['Low-credit threshold', billing.low_credit_threshold],
    ]),
    ...creditsChart(all.entries, all.complete),
    h('h2', {}, 'Ledger'),
    billing.entries.length === 0
      ? h('p', {}, 'No entries.')
      : table(
          ['Entry', 'Route', 'Words in', 'Words out', 'Cost', 'When'],
          billing.entries.map((entry) => [entry.entry_id, entry.route, entry.in_words, entry.out_words, entry.cost, when(entry.created_at)]),
        ),
    billing.entries.length === 50 && billing.next_cursor ? h('p', {}, link(`#/billing${query({ cursor: billing.next_cursor })}`, 'More entries →')) : null,
  ];
}

window.addEventListener('hashchange', () => {
  navigated();
  void render();
});
onRerender(() => void render());
void render();
