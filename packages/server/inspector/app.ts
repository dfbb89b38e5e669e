// The inspector: a small page over the server's own /v1 API that lets a person see what an agent
// knows, why a memory ranked, where it came from, and erase it. No framework, no network but the
// server it came from; every value is rendered as text (dom.ts).
import { api, ApiError, enc, KeyRefused, query, session } from './api.js';
import { append, facts, h, replace, table, when, type Child } from './dom.js';

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const notice = document.getElementById('notice') as HTMLElement;

type Params = Record<string, string>;
type View = (params: Params, search: URLSearchParams) => Promise<Child[]>;

const ROUTES: [RegExp, View][] = [
  [/^\/$/, agentsView],
  [/^\/billing$/, billingView],
  [/^\/agents\/(?<agent>[^/]+)$/, agentView],
  [/^\/agents\/(?<agent>[^/]+)\/threads\/(?<thread>[^/]+)$/, threadView],
  [/^\/agents\/(?<agent>[^/]+)\/threads\/(?<thread>[^/]+)\/observations\/(?<observation>[^/]+)\/receipt$/, receiptView],
  [/^\/agents\/(?<agent>[^/]+)\/memories\/(?<memory>[^/]+)$/, memoryView],
  [/^\/agents\/(?<agent>[^/]+)\/search$/, searchView],
  [/^\/agents\/(?<agent>[^/]+)\/erasures\/(?<erasure>[^/]+)$/, erasureView],
];

const link = (href: string, ...children: Child[]) => h('a', { href }, ...children);
const agentHref = (agent: string) => `#/agents/${enc(agent)}`;
const threadHref = (agent: string, thread: string) => `${agentHref(agent)}/threads/${enc(thread)}`;
const memoryHref = (agent: string, memory: string) => `${agentHref(agent)}/memories/${enc(memory)}`;

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

function say(message: string, kind: 'info' | 'error' = 'info'): void {
  replace(notice, message);
  notice.className = message === '' ? '' : `notice ${kind}`;
}

async function render(): Promise<void> {
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
      const children = await view(params, new URLSearchParams(search));
      replace(main, ...children);
    } catch (error) {
      return failed(error);
    }
    focusHeading();
    return;
  }
  replace(main, h('h1', { tabindex: '-1' }, 'Not found'), h('p', {}, 'Nothing is at this address. ', link('#/', 'Back to the agents.')));
  focusHeading();
}

/** After each page change the heading takes the focus, so keyboard and screen-reader users start there. */
function focusHeading(): void {
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
          const who = await api('GET', '/v1/session', undefined, key);
          session.signIn(key);
          say(`Signed in to ${who.organization_name}.`);
          if (location.hash === '' || location.hash === '#/') void render();
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
  const agents: any[] = await api('GET', '/v1/agents');
  return [
    h('h1', { tabindex: '-1' }, 'Agents'),
    agents.length === 0
      ? h('p', {}, 'This organization has no agents yet.')
      : table(
          ['Agent', 'Role', 'Status', 'Created'],
          agents.map((agent: any) => [link(agentHref(agent.agent_id), agent.agent_id), agent.agent_config?.role ?? '', agent.status, when(agent.created_at)]),
        ),
  ];
}

async function agentView({ agent: agentId }: Params, search: URLSearchParams): Promise<Child[]> {
  const agent = await api('GET', `/v1/agents/${enc(agentId!)}`);
  const contains = search.get('contains') ?? '';
  const cursor = search.get('cursor') ?? '';
  const memories = await api('GET', `/v1/agents/${enc(agentId!)}/memories${query({ limit: 20, text_contains: contains, cursor })}`);
  const filter = h(
    'form',
    {
      class: 'inline',
      role: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = (filterInput as HTMLInputElement).value;
        location.hash = `${agentHref(agentId!)}${query({ contains: value })}`;
      },
    },
    h('label', { for: 'contains' }, 'Memories containing'),
  );
  const filterInput = h('input', { id: 'contains', name: 'contains', type: 'search', value: contains });
  append(filter, [filterInput, h('button', { type: 'submit' }, 'Filter')]);
  const ask = h(
    'form',
    {
      class: 'inline',
      role: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        location.hash = `${agentHref(agentId!)}/search${query({ q: (askInput as HTMLInputElement).value })}`;
      },
    },
    h('label', { for: 'ask' }, 'Search as a chat turn would'),
  );
  const askInput = h('input', { id: 'ask', name: 'q', type: 'search', required: true });
  append(ask, [askInput, h('button', { type: 'submit' }, 'Search')]);
  return [
    h('h1', { tabindex: '-1' }, agent.agent_config?.role ?? agentId),
    facts([
      ['Agent', agent.agent_id],
      ['Status', agent.status],
      ['Objective', agent.agent_config?.objective],
      // Issue 42: whose memories a person's requests read.
      ['Memory scope', agent.agent_config?.memory_scope === 'end_user' ? "per person (end_user): each person reads their own threads' memories and shared ones" : 'shared (agent): every person reads every memory'],
      ['Created', when(agent.created_at)],
    ]),
    h('h2', {}, 'Threads'),
    agent.threads.length === 0
      ? h('p', {}, 'No threads.')
      : table(
          ['Thread', 'Title', 'Status', 'Updated'],
          agent.threads.map((thread: any) => [link(threadHref(agentId!, thread.thread_id), thread.thread_id), thread.title, thread.status, when(thread.updated_at)]),
        ),
    h('h2', {}, 'Memories'),
    ask,
    filter,
    memoryTable(agentId!, memories.memories ?? []),
    memories.next_cursor ? h('p', {}, link(`${agentHref(agentId!)}${query({ contains, cursor: memories.next_cursor })}`, 'Older memories →')) : null,
    h('h2', {}, 'Erase what a person said'),
    eraseForm(agentId!, 'end_user_id', 'everything learned from the threads of this person (their X-SP-End-User id)'),
  ];
}

function memoryTable(agentId: string, memories: any[]): Child {
  if (memories.length === 0) return h('p', {}, 'No memories match.');
  return table(
    ['Memory', 'Speaker', 'Learned', 'From'],
    memories.map((memory) => [link(memoryHref(agentId, memory.memory_id), memory.text), memory.speaker ?? '', when(memory.learned_at), sourceLink(agentId, memory.source)]),
  );
}

/** Where a memory came from, as a link to its thread (and the page of a document). */
function sourceLink(agentId: string, source: any): Child {
  if (!source?.thread_id) return '';
  const where =
    source.kind === 'document'
      ? `${source.filename}${source.page ? `, page ${source.page}` : ''}, piece ${Number(source.piece) + 1}`
      : `turn ${Number(source.turn_index) + 1} of ${source.observation_id}`;
  return link(threadHref(agentId, source.thread_id), where);
}

async function threadView({ agent: agentId, thread: threadId }: Params): Promise<Child[]> {
  const base = `/v1/agents/${enc(agentId!)}/threads/${enc(threadId!)}`;
  const [thread, observations, sources] = await Promise.all([api('GET', base), api('GET', `${base}/observations${query({ limit: 50 })}`), api('GET', `${base}/sources`)]);
  return [
    h('p', { class: 'crumbs' }, link(agentHref(agentId!), agentId!)),
    h('h1', { tabindex: '-1' }, thread.title),
    facts([
      ['Thread', thread.thread_id],
      ['Status', thread.status],
      ['Created', when(thread.created_at)],
    ]),
    h('h2', {}, 'Messages'),
    thread.messages.length === 0
      ? h('p', {}, 'No messages.')
      : h('ol', { class: 'messages' }, ...thread.messages.map((message: any) => h('li', {}, h('span', { class: 'speaker' }, message.speaker), ' ', h('span', { class: 'time' }, when(message.timestamp)), h('p', {}, message.text)))),
    h('h2', {}, 'Observations'),
    observations.observations.length === 0
      ? h('p', {}, 'No observations.')
      : table(
          ['Observation', 'Status', 'Turns', 'Learning report', 'Receipt'],
          observations.observations.map((o: any) => [
            h('span', { id: o.observation_id }, o.observation_id),
            o.status,
            `${o.turns_processed} / ${o.turns_total}`,
            o.learning ? `${o.learning.message} (turns ${o.learning.not_learned_turns.map((r: any) => (r.first === r.last ? r.first : `${r.first}-${r.last}`)).join(', ')}; ${o.learning.reason})` : o.error ?? '',
            FINAL_STATUSES.includes(o.status) ? link(receiptHref(agentId!, threadId!, o.observation_id), 'Receipt') : '',
          ]),
        ),
    h('h2', {}, 'Documents'),
    sources.sources.length === 0
      ? h('p', {}, 'No documents.')
      : table(
          ['Document', 'State', 'Pieces learned', 'Erase'],
          sources.sources.map((source: any) => [source.filename, source.document_state, `${source.turns_learned} / ${source.turns_total}`, source.source_id ? eraseForm(agentId!, 'source_id', `everything learned from ${source.filename}`, source.source_id) : '']),
        ),
    h('h2', {}, 'Erase this thread'),
    eraseForm(agentId!, 'thread_id', 'every memory, message and stored original learned in this thread', threadId!),
  ];
}

const FINAL_STATUSES = ['committed', 'failed', 'cancelled'];
const receiptHref = (agent: string, thread: string, observation: string) => `${threadHref(agent, thread)}/observations/${enc(observation)}/receipt`;

/** `model: 1200 in / 80 out` per model (embedders: input only), `; `-separated; empty when none. */
const modelTokens = (entries: { model: string; input_tokens: number; output_tokens: number }[]) =>
  entries.map((entry) => `${entry.model}: ${entry.input_tokens} in${entry.output_tokens > 0 ? ` / ${entry.output_tokens} out` : ''}`).join('; ');

/** A finished observation's receipt: per turn what was learned, merged, superseded or skipped, its model tokens and its credits. */
async function receiptView({ agent: agentId, thread: threadId, observation: observationId }: Params): Promise<Child[]> {
  const receipt = await api('GET', `/v1/agents/${enc(agentId!)}/threads/${enc(threadId!)}/observe/${enc(observationId!)}/receipt`);
  const memoryLinks = (ids: string[]) => (ids.length === 0 ? '' : h('span', {}, ...ids.flatMap((id, i) => [i > 0 ? ', ' : null, link(memoryHref(agentId!, id), id)])));
  return [
    h('p', { class: 'crumbs' }, link(agentHref(agentId!), agentId!), ' / ', link(threadHref(agentId!, threadId!), threadId!)),
    h('h1', { tabindex: '-1' }, 'Receipt'),
    facts([
      ['Observation', receipt.observation_id],
      ['Status', receipt.status],
      ['Net credits', receipt.net_credits],
      ['Ledger entries', receipt.ledger_entries.map((entry: any) => `#${entry.entry_id} ${entry.kind} ${entry.cost}`).join(', ')],
      ['Ended without successor', receipt.superseded_without_successor.join(', ')],
      ['Model tokens', modelTokens(receipt.model_tokens) || 'none reported'],
    ]),
    table(
      ['Turn', 'Outcome', 'Memories written or merged into', 'Superseded', 'Model tokens', 'Charged', 'Refunded', 'Ledger entries'],
      receipt.turns.map((turn: any) => [
        turn.turn_index + 1,
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

/**
 * An erasure behind a confirmation: the first button only opens the question, and the erasure
 * starts on the second (both plain buttons, so the keyboard reaches them).
 */
function eraseForm(agentId: string, target: 'thread_id' | 'source_id' | 'end_user_id', what: string, value?: string): HTMLElement {
  const box = h('div', { class: 'erase' });
  const input = value === undefined ? h('input', { type: 'text', name: target, required: true, 'aria-label': 'Person id (X-SP-End-User)' }) : null;
  const start = h('button', {
    type: 'button',
    class: 'danger',
    onclick: () => {
      const id = value ?? input!.value.trim();
      if (id === '') return input!.focus();
      const confirm = h('button', {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          try {
            const erasure = await api('POST', `/v1/agents/${enc(agentId)}/memories/erase`, { [target]: id });
            location.hash = `${agentHref(agentId)}/erasures/${enc(erasure.erasure_id)}`;
          } catch (error) {
            if (error instanceof KeyRefused) return failed(error);
            say(error instanceof ApiError ? error.message : String(error), 'error');
          }
        },
      }, 'Erase for good');
      const cancel = h('button', { type: 'button', onclick: () => replace(box, ...initial) }, 'Cancel');
      replace(box, h('p', { role: 'alert' }, `Erase ${what}? This cannot be undone.`), confirm, ' ', cancel);
      confirm.focus();
    },
  }, 'Erase…');
  const initial: Child[] = [input, start];
  append(box, initial);
  return box;
}

async function erasureView({ agent: agentId, erasure: erasureId }: Params): Promise<Child[]> {
  const erasure = await api('GET', `/v1/agents/${enc(agentId!)}/erasures/${enc(erasureId!)}`);
  const done = erasure.status === 'completed' || erasure.status === 'failed';
  if (!done) setTimeout(() => location.hash.includes(erasureId!) && void render(), 500);
  return [
    h('p', { class: 'crumbs' }, link(agentHref(agentId!), agentId!)),
    h('h1', { tabindex: '-1' }, `Erasure ${erasure.status}`),
    facts([
      ['Erasure', erasure.erasure_id],
      ['Of', `${erasure.target.kind.replace('_', ' ')} ${erasure.target.id}`],
      ['Memories removed', erasure.counts?.memories],
      ['Threads', erasure.counts?.threads],
      ['Observations', erasure.counts?.observations],
      ['Stored originals', erasure.counts?.originals],
      ['Stored replays', erasure.counts?.replays],
      ['Error', erasure.error],
      ['Started', when(erasure.started_at)],
      ['Completed', when(erasure.completed_at)],
    ]),
  ];
}

async function memoryView({ agent: agentId, memory: memoryId }: Params): Promise<Child[]> {
  const memory = await api('GET', `/v1/agents/${enc(agentId!)}/memories/${enc(memoryId!)}`);
  const deleteButton = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        try {
          await api('DELETE', `/v1/agents/${enc(agentId!)}/memories/${enc(memoryId!)}`);
          say('The memory was deleted.');
          location.hash = agentHref(agentId!);
        } catch (error) {
          if (error instanceof KeyRefused) return failed(error);
          say(error instanceof ApiError ? error.message : String(error), 'error');
        }
      },
    },
    'Delete this memory',
  );
  const source = memory.source ?? {};
  return [
    h('p', { class: 'crumbs' }, link(agentHref(agentId!), agentId!)),
    h('h1', { tabindex: '-1' }, 'Memory'),
    h('blockquote', { class: 'memory-text' }, memory.text),
    facts([
      ['Memory', memory.memory_id],
      ['Speaker', memory.speaker],
      ['Occurred', when(memory.occurred_at)],
      ['Learned', when(memory.learned_at)],
      ['Valid from', when(memory.valid_from)],
      ['Valid until', when(memory.valid_to)],
      ['Superseded by', memory.superseded_by ? link(memoryHref(agentId!, memory.superseded_by), memory.superseded_by) : null],
      ['Suspicious', memory.suspicious ? 'yes: it reads like instructions; it is kept as evidence only' : null],
      ['From', sourceLink(agentId!, source)],
      ['Span in the turn', memory.span ? `characters ${memory.span.start}-${memory.span.end}` : null],
      ['Learned by', memory.writer],
      ['Learning job', memory.job_id],
      ['Learning credits', memory.learning_credits],
    ]),
    Array.isArray(memory.also_from) && memory.also_from.length > 0 ? h('h2', {}, 'Also learned from') : null,
    Array.isArray(memory.also_from) && memory.also_from.length > 0 ? h('ul', {}, ...memory.also_from.map((other: any) => h('li', {}, sourceLink(agentId!, other)))) : null,
    deleteButton,
  ];
}

async function searchView({ agent: agentId }: Params, search: URLSearchParams): Promise<Child[]> {
  const q = search.get('q') ?? '';
  const result = await api('POST', `/v1/agents/${enc(agentId!)}/memories/search`, { query: q });
  const hits: any[] = result.hits ?? [];
  const signals = [...new Set(hits.flatMap((hit) => Object.keys(hit.signals ?? {})))];
  return [
    h('p', { class: 'crumbs' }, link(agentHref(agentId!), agentId!)),
    h('h1', { tabindex: '-1' }, 'Search'),
    h('p', {}, 'What a chat turn asking ', h('q', {}, q), ' would retrieve, and why each memory ranked where it did.'),
    hits.length === 0
      ? h('p', {}, 'Nothing was retrieved.')
      : table(
          ['Rank', 'Memory', 'Fused', ...signals.map((signal) => signal.replace('_', ' '))],
          hits.map((hit) => [
            hit.rank,
            link(memoryHref(agentId!, hit.memory.memory_id), hit.memory.text),
            score(hit.score),
            ...signals.map((signal) => score(hit.signals?.[signal])),
          ]),
          'Score per signal (0 where a signal did not contribute)',
        ),
  ];
}

const score = (value: unknown): string => (typeof value === 'number' ? value.toFixed(3) : '0');

async function billingView(_: Params, search: URLSearchParams): Promise<Child[]> {
  const cursor = search.get('cursor') ?? '';
  const billing = await api('GET', `/v1/billing${query({ limit: 50, cursor })}`);
  return [
    h('h1', { tabindex: '-1' }, 'Billing'),
    facts([
      ['Organization', billing.organization_id],
      ['Billing', billing.enabled ? 'on' : 'off'],
      ['Balance', billing.balance ?? 'none'],
      ['Low-credit threshold', billing.low_credit_threshold],
    ]),
    h('h2', {}, 'Ledger'),
    billing.entries.length === 0
      ? h('p', {}, 'No entries.')
      : table(
          ['Entry', 'Route', 'Words in', 'Words out', 'Cost', 'When'],
          billing.entries.map((entry: any) => [entry.entry_id, entry.route, entry.in_words, entry.out_words, entry.cost, when(entry.created_at)]),
        ),
    billing.entries.length === 50 && billing.next_cursor ? h('p', {}, link(`#/billing${query({ cursor: billing.next_cursor })}`, 'More entries →')) : null,
  ];
}

window.addEventListener('hashchange', () => {
  say('');
  void render();
});
void render();
