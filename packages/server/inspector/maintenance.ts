// Maintenance runs (issues 43 and 44): the agent's runs, a dry run planned from here, and a page per
// run with its diff (each memory before -> after, its category), the guard, and apply / undo.
import type { Schemas } from '@memory-agents/client';
import { api, enc } from './api.js';
import { facts, h, replace, table, when, type Child } from './dom.js';
import { actionFailed, agentCrumb, agentHref, counted, idWithCopy, link, memoryHref, say, type Params } from './ui.js';

type Kind = Schemas['MaintenancePlanRequest']['kind'];

const KINDS: [Kind, string][] = [
  ['merge_duplicates', 'Merge restatements of one fact'],
  ['supersede_history', 'Supersede old facts a later memory replaces'],
  ['sweep_expired', 'Forget expired memories'],
  ['reapply_policy', 'Apply the current extraction policy to older memories'],
];

const ACTIONS: Record<string, string> = { merge: 'merged into', supersede: 'superseded by', forget: 'forgotten', redact: 'redacted', recategorise: 're-categorised' };

export const runHref = (agent: string, run: string) => `${agentHref(agent)}/maintenance/${enc(run)}`;

/** The agent page's section: a dry run planned from a kind, and the latest runs. */
export async function maintenanceSection(agentId: string): Promise<Child[]> {
  const { runs } = await api().maintenance.list({ agentId, limit: 10 });
  const kind = h('select', { id: 'maintenance-kind', name: 'kind' }, ...KINDS.map(([value, label]) => h('option', { value }, label)));
  const form = h(
    'form',
    {
      class: 'inline',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          const run = await api().maintenance.plan({ agentId, kind: kind.value as Kind });
          location.hash = runHref(agentId, run.run_id);
        } catch (error) {
          actionFailed(error);
        }
      },
    },
    h('label', { for: 'maintenance-kind' }, 'Tidy'),
    kind,
    h('button', { type: 'submit' }, 'Dry run'),
  );
  return [
    counted('Maintenance', runs.length),
    h('p', { class: 'hint' }, 'A dry run shows what would change and changes nothing; you apply it, and can undo it within the restore window.'),
    form,
    runs.length === 0
      ? h('p', {}, 'No maintenance runs yet.')
      : table(
          ['Run', 'Kind', 'Status', 'Changes', 'By', 'Planned'],
          runs.map((run) => [link(runHref(agentId, run.run_id), run.run_id), run.kind, run.status, run.progress.total, run.created_by, when(run.created_at)]),
        ),
  ];
}

const memoryCell = (agentId: string, id: string | null, text: string | null): Child =>
  id === null ? '' : text === null ? h('span', { class: 'hint' }, `${id} (erased)`) : link(memoryHref(agentId, id), text);

/** What a change does to its memory, as "before -> after" columns. */
function changeRow(agentId: string, change: Schemas['MaintenanceChange']): Child[] {
  const category = change.category && change.category.from !== change.category.to ? `${change.category.from ?? 'none'} → ${change.category.to ?? 'none'}` : (change.category?.to ?? '');
  const after =
    change.action === 'forget'
      ? h('span', { class: 'tag' }, 'forgotten (restorable, then erased)')
      : change.action === 'recategorise'
        ? h('span', { class: 'tag' }, 'same text')
        : change.action === 'redact' && change.keep_text !== null
          ? h('span', {}, change.keep_text)
          : memoryCell(agentId, change.keep_id, change.keep_text);
  return [ACTIONS[change.action] ?? change.action, memoryCell(agentId, change.memory_id, change.memory_text), after, category, change.reason];
}

/** `#/agents/{agent}/maintenance/{run}`: the run, its guard, its diff, and the action its status allows. */
export async function maintenanceRunView({ agent: agentId, run: runId }: Params, _: URLSearchParams, rerender: () => void): Promise<Child[]> {
  const run = await api().maintenance.get({ agentId: agentId!, runId: runId! });
  const act = (verb: 'apply' | 'undo', label: string) => {
    const button = h('button', {
      type: 'button',
      class: verb === 'apply' ? 'danger' : '',
      onclick: async () => {
        button.disabled = true;
        try {
          const done = await api().maintenance[verb]({ agentId: agentId!, runId: runId! });
          say(verb === 'apply' ? `Applied: ${describeReceipt(done.receipt)}.` : 'Undone: every change of the run was reversed.');
          rerender();
        } catch (error) {
          button.disabled = false;
          actionFailed(error);
        }
      },
    }, label);
    return button;
  };
  const actions = h('p', { class: 'actions' });
  if (run.status === 'dry_run' && run.progress.total > 0) replace(actions, run.guard.allowed ? act('apply', 'Apply these changes') : h('span', { class: 'error' }, `The guard refuses: ${run.guard.reason}`));
  if (run.status === 'applied' || (run.status === 'failed' && run.progress.done > 0)) replace(actions, act('undo', 'Undo this run'));
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, `Maintenance: ${run.kind.replace(/_/g, ' ')} (${run.status.replace('_', ' ')})`),
    facts([
      ['Run', idWithCopy(run.run_id)],
      ['Planned', `${when(run.created_at)} by ${run.created_by === 'schedule' ? 'the idle schedule' : run.created_by}`],
      ['Guard', `${run.guard.allowed ? 'allows' : 'refuses'}: takes ${(run.guard.share * 100).toFixed(1)}% of ${run.guard.current_memories} current memories out of search (at most ${(run.guard.max_share * 100).toFixed(1)}%)`],
      ['Progress', `${run.progress.done} of ${run.progress.total}`],
      ['Applied', run.applied_at ? `${when(run.applied_at)}: ${describeReceipt(run.receipt)}` : null],
      ['Undo until', when(run.undo_until)],
      ['Undone', when(run.undone_at)],
      ['Note', run.error],
    ]),
    actions,
    counted('Changes', run.changes.length),
    run.changes.length === 0 ? h('p', {}, 'Nothing to change.') : table(['Change', 'Memory (before)', 'After', 'Category', 'Why'], run.changes.map((change) => changeRow(agentId!, change))),
  ];
}

function describeReceipt(receipt: Schemas['MaintenanceRun']['receipt']): string {
  const parts = Object.entries(receipt).filter(([, count]) => count > 0).map(([name, count]) => `${count} ${name}`);
  return parts.length === 0 ? 'nothing changed' : parts.join(', ');
}
