// People: the end users (X-SP-End-User) who used an agent, and one person's threads and memories.
// No route lists an agent's people, so they are read from its activity log (who called it, in which
// thread, when; never text): the latest LOG_PAGES pages of it, and the page says so.
import type { Schemas } from '@memory-agents/client';
import { api, enc, query } from './api.js';
import { facts, h, table, when, type Child } from './dom.js';
import { eraseForm } from './erase.js';
import { agentCrumb, agentHref, agentNames, counted, idWithCopy, link, memoryTable, short, threadHref, type Params } from './ui.js';

const LOG_PAGES = 10;
const LOG_PAGE = 100;

type LogEntry = Schemas['ActivityLogEntry'];
type Person = { id: string; requests: number; threads: Set<string>; first: string; last: string };

/** The agent's latest activity (at most LOG_PAGES pages, newest first) and whether that is all of it. */
async function activity(agentId: string): Promise<{ entries: LogEntry[]; complete: boolean }> {
  const entries: LogEntry[] = [];
  let cursor = '';
  for (let page = 0; page < LOG_PAGES; page++) {
    const log = await api().agents.logs({ agentId, limit: LOG_PAGE, cursor: cursor || undefined });
    entries.push(...log.entries);
    cursor = log.next_cursor ?? '';
    if (!cursor) return { entries, complete: true };
  }
  return { entries, complete: false };
}

/** The people in the entries (an `eu_` subject; the organization's own calls name no person). */
function people(entries: LogEntry[]): Map<string, Person> {
  const found = new Map<string, Person>();
  for (const entry of entries) {
    if (!String(entry.user_id).startsWith('eu_')) continue;
    const person = found.get(entry.user_id) ?? { id: entry.user_id, requests: 0, threads: new Set<string>(), first: entry.created_at, last: entry.created_at };
    person.requests++;
    if (entry.thread_id) person.threads.add(entry.thread_id);
    if (entry.created_at < person.first) person.first = entry.created_at;
    if (entry.created_at > person.last) person.last = entry.created_at;
    found.set(entry.user_id, person);
  }
  return found;
}

const personHref = (agent: string, person: string) => `${agentHref(agent)}/people/${enc(person)}`;
const extent = (complete: boolean) => (complete ? 'From the whole activity log of this agent.' : `From the latest ${LOG_PAGES * LOG_PAGE} entries of this agent's activity log; older activity is not counted.`);

export async function peopleView({ agent: agentId }: Params): Promise<Child[]> {
  const [agent, log] = await Promise.all([api().agents.get({ agentId: agentId! }), activity(agentId!)]);
  agentNames.set(agent.agent_id, agent.agent_config?.role || 'Agent');
  const live = new Set<string>(agent.threads.map((thread) => thread.thread_id));
  const found = [...people(log.entries).values()].sort((a, b) => (a.last < b.last ? 1 : -1));
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, 'People', ' ', h('span', { class: 'count' }, `(${found.length})`)),
    h('p', { class: 'hint' }, 'The end users (X-SP-End-User) who used this agent. ', extent(log.complete)),
    found.length === 0
      ? h('p', {}, 'No person has used this agent.')
      : table(
          ['Person', 'Threads', 'Requests', 'First seen', 'Last seen'],
          found.map((person) => [
            link(personHref(agentId!, person.id), `Person ${short(person.id)}`),
            [...person.threads].filter((thread) => live.has(thread)).length,
            person.requests,
            when(person.first),
            when(person.last),
          ]),
        ),
  ];
}

export async function personView({ agent: agentId, person: personId }: Params, search: URLSearchParams): Promise<Child[]> {
  const cursor = search.get('cursor') ?? '';
  const [agent, log, memories] = await Promise.all([
    api().agents.get({ agentId: agentId! }),
    activity(agentId!),
    api().memories.list({ agentId: agentId!, end_user_id: personId || undefined, limit: 20, cursor: cursor || undefined }),
  ]);
  agentNames.set(agent.agent_id, agent.agent_config?.role || 'Agent');
  const person = people(log.entries).get(personId!);
  const threads = agent.threads.filter((thread) => person?.threads.has(thread.thread_id));
  const list = memories.memories ?? [];
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!), ' / ', link(`${agentHref(agentId!)}/people`, 'People')),
    h('h1', { tabindex: '-1' }, `Person ${short(personId!)}`),
    facts([
      ['Person', idWithCopy(personId!)],
      ['Requests', person ? String(person.requests) : '0'],
      ['First seen', when(person?.first)],
      ['Last seen', when(person?.last)],
    ]),
    h('p', { class: 'hint' }, extent(log.complete)),
    counted('Threads', threads.length),
    threads.length === 0
      ? h('p', {}, 'No threads of this person.')
      : table(
          ['Thread', 'Id', 'Status', 'Updated'],
          threads.map((thread) => [link(threadHref(agentId!, thread.thread_id), thread.title), idWithCopy(thread.thread_id), thread.status, when(thread.updated_at)]),
        ),
    h('h2', {}, 'What the agent knows about them ', h('span', { class: 'count' }, `(${list.length}${memories.next_cursor ? '+' : ''})`)),
    h('p', { class: 'hint' }, "The memories learned in this person's threads."),
    memoryTable(agentId!, list),
    memories.next_cursor ? h('p', {}, link(`${personHref(agentId!, personId!)}${query({ cursor: memories.next_cursor })}`, 'Older memories →')) : null,
    h('h2', {}, 'Erase this person'),
    h('p', { class: 'hint' }, 'Every thread this person created, its messages, observations and stored originals, and every memory learned from them (the erasure route, by their eu_ id).'),
    eraseForm(agentId!, 'person_id', `everything learned from the threads of person ${short(personId!)}`, personId!),
  ];
}
