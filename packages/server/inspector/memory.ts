// One memory: its text, provenance, timeline, and the edit, pin, forget, restore and expiry forms.
import type { Memory, Schemas } from '@memory-agents/client';
import { api, ApiError, KeyRefused } from './api.js';
import { append, facts, h, when, type Child } from './dom.js';
import { isoFromLocal, localValue } from './when.js';
import { actionFailed, agentCrumb, agentHref, confirmed, counted, idWithCopy, link, memoryHref, say, sourceLink, type Params } from './ui.js';

export async function memoryView({ agent: agentId, memory: memoryId }: Params, _: URLSearchParams, rerender: () => void): Promise<Child[]> {
  // Expired memories too (for audit): an expiry set here in the past must not lose the page.
  const memory = await api().memories.get({ agentId: agentId!, memoryId: memoryId!, include_expired: true });
  const expired = memory.expires_at !== null && Date.parse(memory.expires_at) <= Date.now();
  const remove = confirmed('Delete this memory…', 'Delete this memory? It is no longer listed, retrieved or cited. This cannot be undone.', 'Delete for good', async () => {
    await api().memories.delete({ agentId: agentId!, memoryId: memoryId! });
    say(`The memory "${memory.text.slice(0, 60)}${memory.text.length > 60 ? '…' : ''}" was deleted.`, 'info', true);
    location.hash = agentHref(agentId!);
  });
  const source = memory.source ?? null;
  const [words, events] = await Promise.all([sourceTurn(agentId!, source), timeline(agentId!, memory)]);
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, 'Memory', memory.pinned ? h('span', { class: 'badge pinned' }, 'pinned') : null, memory.forgotten ? h('span', { class: 'badge forgotten' }, 'forgotten') : null),
    h('blockquote', { class: 'memory-text' }, memory.text),
    facts([
      ['Memory', idWithCopy(memory.memory_id)],
      ['From', sourceLink(agentId!, source)],
      ['Speaker', memory.speaker],
      // Issue 44: the category of the agent's extraction policy it was given (learning or reapply_policy).
      ['Category', memory.category],
      ['Occurred', when(memory.occurred_at)],
      ['Learned', when(memory.learned_at)],
      ['Valid from', when(memory.valid_from)],
      ['Valid until', when(memory.valid_to)],
      ['Pinned', memory.pinned ? 'yes: it never expires unless told, and decay leaves its score alone' : null],
      ['Edited from', memory.edited?.from_memory_id ? h('span', {}, link(memoryHref(agentId!, memory.edited.from_memory_id), 'the text before the edit'), ` (kept as history; edited ${when(memory.edited.at)} by ${memory.edited.by})`) : null],
      ['Superseded by', memory.superseded_by ? link(memoryHref(agentId!, memory.superseded_by), 'the memory that replaced it') : null],
      ['Suspicious', memory.suspicious ? 'yes: it reads like instructions; it is kept as evidence only' : null],
      ['Span in the turn', memory.span ? `characters ${memory.span.start}-${memory.span.end}` : null],
      ['Learned by', memory.writer],
      ['Learning job', memory.job_id ? idWithCopy(memory.job_id) : null],
      ['Learning credits', memory.learning_credits],
      // Issue 43: a memory held for review is hidden until approved; the queue decides it.
      ['Review', memory.review_state === null ? null : h('span', {}, `${memory.review_state}${memory.review_state === 'approved' ? '' : ' (hidden from lists, search and chat until approved)'} `, link(`${agentHref(agentId!)}/review${memory.review_state === 'pending' ? '' : `?state=${memory.review_state}`}`, 'review queue →'))],
      ['Forgotten', memory.forgotten ? `${when(memory.forgotten.at)}: "${memory.forgotten.reason}" (gone from lists, search and chat; restorable until ${when(memory.forgotten.restore_until)}; shown here for audit)` : null],
      ['Expires', memory.forgotten || memory.review_state === 'pending' || memory.review_state === 'declined' ? null : memory.expires_at ? `${when(memory.expires_at)}${expired ? ' (expired: gone from lists, search and chat; shown here for audit)' : ''}` : 'never'],
    ]),
    words ? h('h2', {}, 'The words it came from') : null,
    words ? h('blockquote', { class: 'source-words' }, ...marked(words.text, memory.span)) : null,
    Array.isArray(memory.also_from) && memory.also_from.length > 0 ? h('h2', {}, 'Also learned from') : null,
    Array.isArray(memory.also_from) && memory.also_from.length > 0 ? h('ul', {}, ...memory.also_from.map((other) => h('li', {}, sourceLink(agentId!, other)))) : null,
    counted('Timeline', `${events.length} event${events.length === 1 ? '' : 's'}`),
    h('p', { class: 'hint' }, 'Its versions in order: what replaced or edited what, the turns merged into each, their forgetting and expiry (from its history: GET .../memories/{id}/history).'),
    timelineList(agentId!, memory.memory_id, events),
    // A forgotten memory takes no change (409) until it is restored.
    memory.forgotten ? restorePanel(agentId!, memory, rerender) : null,
    memory.forgotten ? null : h('h2', {}, 'Pin'),
    memory.forgotten ? null : pinPanel(agentId!, memory, rerender),
    // History (superseded) takes no edit: the API's 409 names the current memory.
    memory.forgotten || memory.superseded_by ? null : h('h2', {}, 'Edit the text'),
    memory.forgotten || memory.superseded_by ? null : editForm(agentId!, memory),
    memory.forgotten ? null : h('h2', {}, 'Expiry'),
    memory.forgotten ? null : expiryForm(agentId!, memory, rerender),
    memory.forgotten ? null : h('h2', {}, 'Forget'),
    memory.forgotten ? null : forgetForm(agentId!, memory, rerender),
    remove,
  ];
}

/**
 * Edit the text (`PATCH .../memories/{id}` `text`): the answer is a new memory (the old one stays as
 * history), so the page goes to it and the notice links the old one.
 */
function editForm(agentId: string, memory: Memory): HTMLElement {
  const text = h('textarea', { id: 'memory-text', name: 'text', rows: 3, required: true, maxlength: 4000 });
  text.value = memory.text;
  const save = h('button', { type: 'submit' }, 'Save the new text');
  const form = h('form', {
    class: 'edit',
    onsubmit: async (event: Event) => {
      event.preventDefault();
      save.disabled = true;
      try {
        const edited = await api().memories.update({ agentId, memoryId: memory.memory_id, text: text.value });
        say(h('span', {}, 'Saved as a new memory. The old text is kept as history: ', link(memoryHref(agentId, memory.memory_id), `"${memory.text.slice(0, 60)}${memory.text.length > 60 ? '…' : ''}"`), '.'), 'info', true);
        location.hash = memoryHref(agentId, edited.memory_id);
      } catch (error) {
        actionFailed(error);
      } finally {
        save.disabled = false;
      }
    },
  });
  append(form, [h('label', { for: 'memory-text' }, 'Text'), text, save]);
  return h('div', {}, h('p', { class: 'hint' }, 'Saving writes a new memory with this text (same source); this one stays as history, replaced by it.'), form);
}

/** Pin or unpin (`PATCH .../memories/{id}` `pinned`). Pinning clears an expiry. */
function pinPanel(agentId: string, memory: Memory, rerender: () => void): HTMLElement {
  const toggle = h('button', {
    type: 'button',
    'aria-pressed': memory.pinned ? 'true' : 'false',
    onclick: async () => {
      toggle.disabled = true;
      try {
        await api().memories.update({ agentId, memoryId: memory.memory_id, pinned: !memory.pinned });
        say(memory.pinned ? 'The memory is no longer pinned.' : 'The memory is pinned.');
        rerender();
      } catch (error) {
        toggle.disabled = false;
        actionFailed(error);
      }
    },
  }, memory.pinned ? 'Unpin' : 'Pin');
  return h('div', {}, h('p', { class: 'hint' }, memory.pinned ? 'Pinned: it never expires unless told, and decay leaves its score alone.' : 'A pinned memory never expires unless told (pinning clears its expiry), and decay leaves its score alone.'), toggle);
}

/**
 * Forget with a reason (`POST .../forget`): hidden at once, restorable for the server's window, then
 * erased for good, so it asks first.
 */
function forgetForm(agentId: string, memory: Memory, rerender: () => void): HTMLElement {
  const reason = h('input', { id: 'forget-reason', name: 'reason', type: 'text', required: true, maxlength: 500, size: 40 });
  const forget = async () => {
    const forgotten = await api().memories.forget({ agentId, memoryId: memory.memory_id, reason: reason.value });
    say(`The memory was forgotten. It can be restored until ${when(forgotten.forgotten?.restore_until)}; then it is erased for good.`);
    rerender();
  };
  const ready = () => reason.value.trim() !== '' || (reason.focus(), false);
  return confirmed(
    'Forget…',
    'Forget this memory? It is gone from lists, search and chat at once. It can be restored until the restore window ends (7 days unless the server says otherwise); after that it is erased for good.',
    'Forget it',
    forget,
    [h('label', { for: 'forget-reason' }, 'Reason '), reason, ' '],
    ready,
  );
}

/** A forgotten memory: its reason, and Restore until its window ends. */
function restorePanel(agentId: string, memory: Memory, rerender: () => void): HTMLElement {
  const forgotten = memory.forgotten!;
  const open = Date.parse(forgotten.restore_until) > Date.now();
  const restore = h('button', {
    type: 'button',
    onclick: async () => {
      restore.disabled = true;
      try {
        await api().memories.restore({ agentId, memoryId: memory.memory_id });
        say('The memory was restored: it is back in lists, search and chat.');
        rerender();
      } catch (error) {
        restore.disabled = false;
        actionFailed(error);
      }
    },
  }, 'Restore');
  return h(
    'section',
    { class: 'forgotten', 'aria-label': 'Forgotten' },
    h('h2', {}, 'Forgotten'),
    h('p', {}, 'Reason: ', h('q', { class: 'forgotten-reason' }, forgotten.reason), ` (by ${forgotten.by}, ${when(forgotten.at)}).`),
    open
      ? h('p', {}, `It can be restored until ${when(forgotten.restore_until)}; then it is erased for good. `, restore)
      : h('p', {}, `The restore window ended ${when(forgotten.restore_until)}: it is erased at the next sweep.`),
  );
}

/**
 * When the memory expires (`PATCH .../memories/{id}` `expires_at`): a moment, or never. Undoable
 * (clearing the expiry brings an expired memory back), so it asks no confirmation.
 */
function expiryForm(agentId: string, memory: Memory, rerender: () => void): HTMLElement {
  const input = h('input', { id: 'expires-at', name: 'expires_at', type: 'datetime-local', required: true, value: localValue(memory.expires_at ?? '') });
  const save = async (expiresAt: string | null) => {
    try {
      await api().memories.update({ agentId, memoryId: memory.memory_id, expires_at: expiresAt });
      say(expiresAt ? `The memory now expires at ${when(expiresAt)}.` : 'The memory no longer expires.');
      rerender();
    } catch (error) {
      actionFailed(error);
    }
  };
  const form = h('form', {
    class: 'inline',
    onsubmit: (event: Event) => {
      event.preventDefault();
      void save(isoFromLocal(input.value));
    },
  });
  append(form, [
    h('label', { for: 'expires-at' }, 'Expires at'),
    input,
    h('button', { type: 'submit' }, 'Set expiry'),
    memory.expires_at ? h('button', { type: 'button', onclick: () => void save(null) }, 'Never expire') : null,
  ]);
  return h('div', {}, h('p', { class: 'hint' }, 'From that moment the memory is gone from lists, search and chat (a moment past expires it now); "Never expire" brings it back.'), form);
}

type MemorySource = Schemas['MemorySource'];
type TimelineEvent = { at: string | null; memory: Memory } & (
  | { kind: 'learned' | 'merged'; source: MemorySource }
  | { kind: 'superseded' | 'edited'; other: Memory }
  | { kind: 'forgotten' | 'expires' | 'expired' | 'missing' }
);

/** When a turn was said (its timestamp in the thread turns API), or null. */
async function saidAt(agentId: string, source: MemorySource): Promise<string | null> {
  try {
    const turns = await api().threads.turns({ agentId, threadId: source.thread_id, observation_id: source.observation_id, limit: 200 });
    return turns.turns.find((turn) => turn.turn_index === source.turn_index)?.timestamp ?? null;
  } catch (error) {
    if (error instanceof ApiError && !(error instanceof KeyRefused) && error.status === 404) return null;
    throw error;
  }
}

/**
 * A memory's timeline: its versions (the history route: what it replaced and what replaced it,
 * expired and forgotten ones too), when each was learned and replaced, the turns merged into each
 * (`also_from`, at the time they were said) and its expiry, oldest first.
 */
async function timeline(agentId: string, memory: Memory): Promise<TimelineEvent[]> {
  const history = await api().memories.history({ agentId, memoryId: memory.memory_id, include_expired: true });
  const versions = history.versions;
  const byId = new Map(versions.map((version) => [version.memory_id, version]));
  const events: TimelineEvent[] = [];
  for (let i = 0; i < versions.length; i++) {
    const version = versions[i]!;
    // A version an edit wrote is dated by the edit (below, on the version before it), not learned.
    if (!(version.edited && byId.has(version.edited.from_memory_id))) events.push({ at: version.learned_at, kind: 'learned', memory: version, source: version.source });
    const merged = await Promise.all((version.also_from ?? []).map(async (source) => ({ source, at: await saidAt(agentId, source) })));
    merged.sort((a, b) => (Date.parse(a.at ?? '') || 0) - (Date.parse(b.at ?? '') || 0));
    for (const { source, at } of merged) events.push({ at, kind: 'merged', memory: version, source });
    const next = version.superseded_by ? byId.get(version.superseded_by) : undefined;
    // Replaced by a memory that is gone (deleted or erased): the history cannot show it.
    if (version.superseded_by && !next) events.push({ at: version.valid_to, kind: 'missing', memory: version });
    if (version.superseded_by && next) {
      const edit = next.edited?.from_memory_id === version.memory_id ? next.edited : null;
      events.push(edit ? { at: edit.at, kind: 'edited', memory: version, other: next } : { at: version.valid_to ?? next.learned_at, kind: 'superseded', memory: version, other: next });
    }
    // Forgetting expires a memory at that instant: one event, the forgetting.
    if (version.forgotten) events.push({ at: version.forgotten.at, kind: 'forgotten', memory: version });
    else if (version.expires_at) events.push({ at: version.expires_at, kind: Date.parse(version.expires_at) <= Date.now() ? 'expired' : 'expires', memory: version });
  }
  // In the chain's order (a version's learning, its merges, its replacement, then the next version):
  // moments alone would mislead, as a replacement is dated when the new fact became true, often
  // before either version was learned.
  return events;
}

function timelineList(agentId: string, current: string, events: TimelineEvent[]): Child {
  const name = (memory: Memory) => (memory.memory_id === current ? h('strong', {}, `"${memory.text}" (this memory)`) : link(memoryHref(agentId, memory.memory_id), `"${memory.text}"`));
  const what = (event: TimelineEvent): Child[] => {
    switch (event.kind) {
      case 'learned':
        // This memory's own source is linked above (From); the other versions' here.
        return ['Learned ', name(event.memory), ...(event.memory.memory_id === current ? [' from the words above'] : [' from ', sourceLink(agentId, event.source)])];
      case 'merged':
        return ['The same words said again in ', sourceLink(agentId, event.source), ' were merged into ', name(event.memory)];
      case 'superseded':
        return ['', name(event.memory), ' was replaced by ', name(event.other)];
      case 'edited':
        return ['', name(event.memory), ' was edited into ', name(event.other), ` (by ${event.other.edited?.by})`];
      case 'forgotten':
        return ['', name(event.memory), ` was forgotten: "${event.memory.forgotten?.reason}" (by ${event.memory.forgotten?.by}; restorable until ${when(event.memory.forgotten?.restore_until)})`];
      case 'missing':
        return ['', name(event.memory), ` was replaced by a memory that is gone (deleted or erased)`];
      case 'expires':
      case 'expired':
        return ['', name(event.memory), event.kind === 'expired' ? ' expired' : ' expires', ' (set by an edit; the API keeps no date of the edit)'];
    }
  };
  // The moment each event is dated by: a replacement by when the old fact stopped being true.
  const moment = (event: TimelineEvent) => (event.at ? `${event.kind === 'superseded' || event.kind === 'missing' ? 'true until ' : event.kind === 'merged' ? 'said ' : ''}${when(event.at)}` : 'unknown time');
  return h('ol', { class: 'timeline' }, ...events.map((event) => h('li', { 'data-kind': event.kind }, h('span', { class: 'time' }, `${moment(event)}: `), ...what(event))));
}

/** The observed turn a memory came from (its observation's first 200 turns are read), or null. */
async function sourceTurn(agentId: string, source: MemorySource | null): Promise<{ text: string } | null> {
  if (!source?.thread_id || !source.observation_id || Number(source.turn_index) >= 200) return null;
  try {
    const turns = await api().threads.turns({ agentId, threadId: source.thread_id, observation_id: source.observation_id, limit: 200 });
    return turns.turns.find((turn) => turn.turn_index === Number(source.turn_index)) ?? null;
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
