// Erasure: everything derived from a thread, a document or a person, behind a confirmation.
import { api, enc } from './api.js';
import { facts, h, when, type Child } from './dom.js';
import { agentCrumb, agentHref, confirmed, idWithCopy, type Params } from './ui.js';

/** The erasure form: a confirmation first, then the job's page. */
export function eraseForm(agentId: string, target: 'thread_id' | 'source_id' | 'end_user_id' | 'person_id', what: string, value?: string): HTMLElement {
  const input = value === undefined ? h('input', { type: 'text', name: target, required: true, 'aria-label': 'Person id (X-SP-End-User)' }) : null;
  const start = async () => {
    const id = value ?? input!.value.trim();
    const erasure = await api().erasures.erase({ agentId, [target]: id });
    location.hash = `${agentHref(agentId)}/erasures/${enc(erasure.erasure_id)}`;
  };
  // With a person's id to type, an empty field asks for it before the question.
  const ready = () => input === null || input.value.trim() !== '' || (input.focus(), false);
  return confirmed('Erase…', `Erase ${what}? This cannot be undone.`, 'Erase for good', start, [input], ready);
}

export async function erasureView({ agent: agentId, erasure: erasureId }: Params, _: URLSearchParams, rerender: () => void): Promise<Child[]> {
  const erasure = await api().erasures.get({ agentId: agentId!, erasureId: erasureId! });
  const done = erasure.status === 'completed' || erasure.status === 'failed';
  if (!done) setTimeout(() => location.hash.includes(erasureId!) && rerender(), 500);
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, `Erasure ${erasure.status}`),
    facts([
      ['Erasure', idWithCopy(erasure.erasure_id)],
      ['Of', h('span', {}, `${erasure.target.kind.replace('_', ' ')} `, idWithCopy(erasure.target.id))],
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
