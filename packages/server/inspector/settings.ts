// The agent's settings a person can change here (issues 42 and 44): whose memories a person's
// requests read (`memory_scope`) and what every turn has redacted before it is stored
// (`extraction_policy`). Saved with `PATCH /v1/agents/{id}`, the rest of the config kept as it is.
import { api, enc } from './api.js';
import { h, type Child } from './dom.js';
import { actionFailed, say } from './ui.js';

const BUILT_IN = [
  ['card_number', 'card numbers (Luhn-checked)'],
  ['iban', 'IBANs (checksum-checked)'],
  ['phone', 'phone numbers'],
  ['email', 'e-mail addresses'],
] as const;

/** What the agent redacts, in words. */
export function redactionSummary(config: any): string {
  const kinds: string[] = config?.extraction_policy?.redact ?? [];
  if (kinds.length === 0) return 'nothing';
  const region = config?.extraction_policy?.phone_region;
  return `${kinds.join(', ')}${region ? ` (national phone numbers of ${region})` : ''}`;
}

/** The agent's memory decay, in words. */
export function decaySummary(config: any): string {
  const decay = config?.memory_decay ?? {};
  const part = (days: unknown, kind: string) => (typeof days === 'number' ? `${kind} memories lose half their score every ${days} day${days === 1 ? '' : 's'}` : null);
  const parts = [part(decay.turn_half_life_days, 'turn'), part(decay.document_half_life_days, 'document')].filter((p) => p !== null);
  return parts.length === 0 ? 'off' : parts.join('; ');
}

/** The include/exclude rules of the agent's extraction policy (issue 44), in words. */
export function rulesSummary(config: any): string {
  const rule = (r: any) => [r.speakers ? `speaker ${r.speakers.join(' or ')}` : '', r.keywords ? `"${r.keywords.join('" or "')}"` : ''].filter(Boolean).join(' and ');
  const exclude: any[] = config?.extraction_policy?.exclude ?? [];
  const include: any[] = config?.extraction_policy?.include ?? [];
  const parts = [...exclude.map((r) => `never learn ${rule(r)}`), ...(include.length > 0 ? [`learn only ${include.map(rule).join('; or ')}`] : [])];
  return parts.length === 0 ? 'none' : parts.join('; ');
}

/** The settings form; `saved` re-renders the page once the server took the change. */
export function settingsForm(agent: any, saved: () => void): Child {
  const config = agent.agent_config ?? {};
  const kinds: string[] = config.extraction_policy?.redact ?? [];
  const scope = h('select', { id: 'memory-scope', name: 'memory_scope' },
    h('option', { value: 'agent', selected: config.memory_scope !== 'end_user' }, 'shared (agent): every person reads every memory'),
    h('option', { value: 'end_user', selected: config.memory_scope === 'end_user' }, 'per person (end_user): each person reads their own threads and shared ones'),
  );
  const boxes = BUILT_IN.map(([kind, label]) => ({ kind, box: h('input', { type: 'checkbox', name: 'redact', value: kind, checked: kinds.includes(kind), class: 'check', id: `redact-${kind}` }), label }));
  // The operator's own kinds (serve --redact-pattern) are typed by name.
  const others = h('input', { type: 'text', id: 'redact-other', name: 'redact_other', value: kinds.filter((kind) => !BUILT_IN.some(([name]) => name === kind)).join(', '), placeholder: 'e.g. national_id' });
  const region = h('input', { type: 'text', id: 'phone-region', name: 'phone_region', value: config.extraction_policy?.phone_region ?? '', maxlength: 2, size: 3, placeholder: 'DE' });
  // Memory decay half-lives in days (issue 42): an empty field is no decay for that kind; the server
  // checks the range (its 422 sentence is shown).
  const decay = config.memory_decay ?? {};
  const halfLife = (id: string, value: unknown) => h('input', { type: 'number', id, name: id, step: 'any', value: typeof value === 'number' ? String(value) : '', placeholder: 'off', size: 8 });
  const turnDays = halfLife('decay-turn', decay.turn_half_life_days);
  const documentDays = halfLife('decay-document', decay.document_half_life_days);
  const days = (input: HTMLInputElement) => (input.value.trim() === '' ? undefined : Number(input.value));
  const form = h('form', {
    class: 'settings',
    onsubmit: (event: Event) => {
      event.preventDefault();
      const redact = [
        ...boxes.filter(({ box }) => box.checked).map(({ kind }) => kind),
        ...others.value.split(',').map((kind) => kind.trim()).filter((kind) => kind !== ''),
      ];
      // Rules this form does not edit (include/exclude, set over the API) are kept as they are.
      const { redact: _redact, phone_region: _region, ...kept } = config.extraction_policy ?? {};
      const policy = { ...kept, ...(redact.length > 0 ? { redact } : {}), ...(region.value.trim() ? { phone_region: region.value.trim().toUpperCase() } : {}) };
      const memoryDecay = { ...(days(turnDays) !== undefined ? { turn_half_life_days: days(turnDays) } : {}), ...(days(documentDays) !== undefined ? { document_half_life_days: days(documentDays) } : {}) };
      const body = { agent_config: { ...config, memory_scope: scope.value, extraction_policy: policy, ...(Object.keys(memoryDecay).length > 0 || config.memory_decay ? { memory_decay: memoryDecay } : {}) } };
      api('PATCH', `/v1/agents/${enc(agent.agent_id)}`, body).then(() => {
        say('Settings saved. Redaction applies to turns observed from now on.', 'info', true);
        saved();
      }, actionFailed);
    },
  });
  form.append(
    h('p', {}, h('label', { for: 'memory-scope' }, 'Memory scope '), scope),
    h('fieldset', {},
      h('legend', {}, 'Redact before storing (turns observed from now on)'),
      ...boxes.map(({ kind, box, label }) => h('label', { class: 'check-label', for: `redact-${kind}` }, box, ` ${label}`)),
      h('p', {}, h('label', { for: 'redact-other' }, "The server's own kinds, comma-separated "), others),
      h('p', {}, h('label', { for: 'phone-region' }, 'National phone numbers of (country code) '), region),
    ),
    h('p', { id: 'learning-rules' }, `Learning rules (set over the API, kept on save): ${rulesSummary(config)}`),
    h('fieldset', {},
      h('legend', {}, 'Memory decay: half-life in days (empty = no decay; pinned memories never decay)'),
      h('p', {}, h('label', { for: 'decay-turn' }, 'Memories from turns '), turnDays),
      h('p', {}, h('label', { for: 'decay-document' }, 'Memories from documents '), documentDays),
    ),
    h('button', { type: 'submit' }, 'Save settings'),
  );
  return form;
}
