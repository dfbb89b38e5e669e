// The agent's settings a person can change here (issues 42 and 44): whose memories a person's
// requests read (`memory_scope`) and the extraction policy (`extraction_policy`: redaction,
// include/exclude rules, categories, guidance and language for the LLM writer). Saved with
// `PATCH /v1/agents/{id}`, the rest of the config kept as it is; the server's 422 sentence is shown.
import type { Agent, AgentConfig, Schemas } from '@memory-agents/client';
import { api } from './api.js';
import { h, type Child } from './dom.js';
import { actionFailed, say } from './ui.js';

type TurnRule = Schemas['TurnRule'];
type MemoryCategory = Schemas['MemoryCategory'];

const BUILT_IN = [
  ['card_number', 'card numbers (Luhn-checked)'],
  ['iban', 'IBANs (checksum-checked)'],
  ['phone', 'phone numbers'],
  ['email', 'e-mail addresses'],
] as const;

/** What the agent redacts, in words. */
export function redactionSummary(config: AgentConfig | undefined): string {
  const kinds: string[] = config?.extraction_policy?.redact ?? [];
  if (kinds.length === 0) return 'nothing';
  const region = config?.extraction_policy?.phone_region;
  return `${kinds.join(', ')}${region ? ` (national phone numbers of ${region})` : ''}`;
}

/** The agent's memory decay, in words. */
export function decaySummary(config: AgentConfig | undefined): string {
  const decay = config?.memory_decay ?? {};
  const part = (days: unknown, kind: string) => (typeof days === 'number' ? `${kind} memories lose half their score every ${days} day${days === 1 ? '' : 's'}` : null);
  const parts = [part(decay.turn_half_life_days, 'turn'), part(decay.document_half_life_days, 'document')].filter((p) => p !== null);
  return parts.length === 0 ? 'off' : parts.join('; ');
}

/** The include/exclude rules of the agent's extraction policy (issue 44), in words. */
export function rulesSummary(config: AgentConfig | undefined): string {
  const rule = (r: TurnRule) =>
    [
      r.speakers ? `speaker ${r.speakers.join(' or ')}` : '',
      r.keywords ? `"${r.keywords.join('" or "')}"` : '',
      r.patterns ? `/${r.patterns.join('/ or /')}/` : '',
      r.categories ? `category ${r.categories.join(' or ')}` : '',
    ]
      .filter(Boolean)
      .join(' and ');
  const exclude = config?.extraction_policy?.exclude ?? [];
  const include = config?.extraction_policy?.include ?? [];
  const parts = [...exclude.map((r) => `never learn ${rule(r)}`), ...(include.length > 0 ? [`learn only ${include.map(rule).join('; or ')}`] : [])];
  return parts.length === 0 ? 'none' : parts.join('; ');
}

/** Categories as the form shows them: one a line, `name: description; keyword, keyword`. */
export function categoriesText(categories: MemoryCategory[] | undefined): string {
  return (categories ?? []).map((c) => `${c.name}${c.description ? `: ${c.description}` : ''}${c.keywords ? `; ${c.keywords.join(', ')}` : ''}`).join('\n');
}

/** The categories a person typed (see {@link categoriesText}); the server checks names and lengths. */
export function parseCategories(text: string): MemoryCategory[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [head, words] = [line.slice(0, line.includes(';') ? line.indexOf(';') : line.length), line.includes(';') ? line.slice(line.indexOf(';') + 1) : ''];
      const colon = head.indexOf(':');
      const name = (colon < 0 ? head : head.slice(0, colon)).trim();
      const description = colon < 0 ? '' : head.slice(colon + 1).trim();
      const keywords = words.split(',').map((word) => word.trim()).filter((word) => word !== '');
      return { name, ...(description ? { description } : {}), ...(keywords.length > 0 ? { keywords } : {}) };
    });
}

/** A JSON array of rules typed in a box: the array, undefined when empty, or a sentence saying what is wrong. */
function parseRules(text: string, what: string): TurnRule[] | undefined | string {
  if (text.trim() === '') return undefined;
  try {
    const rules: unknown = JSON.parse(text);
    // The server checks each rule (its 422 sentence is shown).
    return Array.isArray(rules) ? (rules as TurnRule[]) : `${what} must be a JSON array of rules, such as [{"keywords": ["password"]}].`;
  } catch (error) {
    return `${what} are not valid JSON: ${(error as Error).message}`;
  }
}

/** The settings form; `saved` re-renders the page once the server took the change. */
export function settingsForm(agent: Agent, saved: () => void): Child {
  const config = agent.agent_config;
  const kinds: string[] = config.extraction_policy?.redact ?? [];
  const scope = h('select', { id: 'memory-scope', name: 'memory_scope' },
    h('option', { value: 'agent', selected: config.memory_scope !== 'end_user' }, 'shared (agent): every person reads every memory'),
    h('option', { value: 'end_user', selected: config.memory_scope === 'end_user' }, 'per person (end_user): each person reads their own threads and shared ones'),
  );
  // Issue 43: which new memories wait in the review queue.
  const review = h('select', { id: 'review-mode', name: 'review_mode' },
    h('option', { value: 'off', selected: (config.review_mode ?? 'off') === 'off' }, 'off: every memory is used at once'),
    h('option', { value: 'inferred', selected: config.review_mode === 'inferred' }, "inferred: memories not in the speaker's words wait for approval"),
    h('option', { value: 'all', selected: config.review_mode === 'all' }, 'all: every new memory waits for approval'),
  );
  const boxes = BUILT_IN.map(([kind, label]) => ({ kind, box: h('input', { type: 'checkbox', name: 'redact', value: kind, checked: kinds.includes(kind), class: 'check', id: `redact-${kind}` }), label }));
  // The operator's own kinds (serve --redact-pattern) are typed by name.
  const others = h('input', { type: 'text', id: 'redact-other', name: 'redact_other', value: kinds.filter((kind) => !BUILT_IN.some(([name]) => name === kind)).join(', '), placeholder: 'e.g. national_id' });
  const region = h('input', { type: 'text', id: 'phone-region', name: 'phone_region', value: config.extraction_policy?.phone_region ?? '', maxlength: 2, size: 3, placeholder: 'DE' });
  // Memory decay half-lives in days (issue 42): an empty field is no decay for that kind; the server
  // checks the range (its 422 sentence is shown).
  const decay: Schemas['MemoryDecay'] = config.memory_decay ?? {};
  const halfLife = (id: string, value: unknown) => h('input', { type: 'number', id, name: id, step: 'any', value: typeof value === 'number' ? String(value) : '', placeholder: 'off', size: 8 });
  const turnDays = halfLife('decay-turn', decay.turn_half_life_days);
  const documentDays = halfLife('decay-document', decay.document_half_life_days);
  const days = (input: HTMLInputElement) => (input.value.trim() === '' ? undefined : Number(input.value));
  // Issue 44: learning rules (JSON arrays), categories, guidance and language of the extraction policy.
  const policyNow: Schemas['ExtractionPolicy'] = config.extraction_policy ?? {};
  const rulesBox = (id: string, rules: unknown) => h('textarea', { id, name: id, rows: 3, cols: 70, placeholder: '[{"keywords": ["password"]}, {"patterns": ["order #?\\\\d{4,12}"]}]' }, rules === undefined ? '' : JSON.stringify(rules));
  const excludeBox = rulesBox('policy-exclude', policyNow.exclude);
  const includeBox = rulesBox('policy-include', policyNow.include);
  const categoriesBox = h('textarea', { id: 'policy-categories', name: 'categories', rows: 4, cols: 70, placeholder: 'preference: what a person likes; prefer, favourite' }, categoriesText(policyNow.categories));
  const onlyCategories = h('input', { type: 'checkbox', id: 'policy-only-categories', class: 'check', checked: policyNow.only_categories === true });
  const instructionsBox = h('textarea', { id: 'policy-instructions', name: 'instructions', rows: 3, cols: 70, maxlength: 4000, placeholder: 'e.g. Remember preferences and decisions, not small talk.' }, policyNow.instructions ?? '');
  const language = h('input', { type: 'text', id: 'policy-language', name: 'language', value: policyNow.language ?? 'speaker', size: 10, placeholder: 'speaker' });
  const form = h('form', {
    class: 'settings',
    onsubmit: (event: Event) => {
      event.preventDefault();
      const redact = [
        ...boxes.filter(({ box }) => box.checked).map(({ kind }) => kind),
        ...others.value.split(',').map((kind) => kind.trim()).filter((kind) => kind !== ''),
      ];
      const exclude = parseRules(excludeBox.value, 'Exclude rules');
      const include = parseRules(includeBox.value, 'Include rules');
      if (typeof exclude === 'string') return say(exclude, 'error');
      if (typeof include === 'string') return say(include, 'error');
      const categories = parseCategories(categoriesBox.value);
      const { redact: _r, phone_region: _p, exclude: _e, include: _i, categories: _c, only_categories: _o, instructions: _n, language: _l, version: _v, ...kept } = config.extraction_policy ?? {};
      const policy = {
        ...kept,
        ...(redact.length > 0 ? { redact } : {}),
        ...(region.value.trim() ? { phone_region: region.value.trim().toUpperCase() } : {}),
        ...(exclude !== undefined ? { exclude } : {}),
        ...(include !== undefined ? { include } : {}),
        ...(categories.length > 0 ? { categories } : {}),
        ...(onlyCategories.checked ? { only_categories: true } : {}),
        ...(instructionsBox.value.trim() ? { instructions: instructionsBox.value.trim() } : {}),
        ...(language.value.trim() && language.value.trim() !== 'speaker' ? { language: language.value.trim() } : {}),
      };
      const memoryDecay = { ...(days(turnDays) !== undefined ? { turn_half_life_days: days(turnDays) } : {}), ...(days(documentDays) !== undefined ? { document_half_life_days: days(documentDays) } : {}) };
      const body = { agent_config: { ...config, memory_scope: scope.value as Schemas['MemoryScope'], ...(review.value !== 'off' || config.review_mode ? { review_mode: review.value as Schemas['ReviewMode'] } : {}), extraction_policy: policy, ...(Object.keys(memoryDecay).length > 0 || config.memory_decay ? { memory_decay: memoryDecay } : {}) } };
      api().agents.update({ agentId: agent.agent_id, ...body }).then(() => {
        say('Settings saved. The extraction policy applies to turns observed from now on.', 'info', true);
        saved();
      }, actionFailed);
    },
  });
  form.append(
    h('p', {}, h('label', { for: 'memory-scope' }, 'Memory scope '), scope),
    h('p', {}, h('label', { for: 'review-mode' }, 'Review before use '), review),
    h('fieldset', {},
      h('legend', {}, 'Redact before storing (turns observed from now on)'),
      ...boxes.map(({ kind, box, label }) => h('label', { class: 'check-label', for: `redact-${kind}` }, box, ` ${label}`)),
      h('p', {}, h('label', { for: 'redact-other' }, "The server's own kinds, comma-separated "), others),
      h('p', {}, h('label', { for: 'phone-region' }, 'National phone numbers of (country code) '), region),
    ),
    h('fieldset', {},
      h('legend', {}, `Extraction policy (version ${policyNow.version ?? 0}; applies to turns observed from now on)`),
      h('p', { id: 'learning-rules' }, `Learning rules: ${rulesSummary(config)}`),
      h('p', {}, h('label', { for: 'policy-exclude' }, 'Exclude rules (JSON: speakers, keywords, patterns, categories) '), excludeBox),
      h('p', {}, h('label', { for: 'policy-include' }, 'Include rules (JSON; empty: learn every turn) '), includeBox),
      h('p', {}, h('label', { for: 'policy-categories' }, 'Categories, one a line (name: description; keyword, keyword) '), categoriesBox),
      h('label', { class: 'check-label', for: 'policy-only-categories' }, onlyCategories, ' Keep only memories that fit a category'),
      h('p', {}, h('label', { for: 'policy-instructions' }, 'Guidance for the LLM writer (passed to the model as data) '), instructionsBox),
      h('p', {}, h('label', { for: 'policy-language' }, 'Language of memories (speaker, or a tag such as de) '), language),
    ),
    h('fieldset', {},
      h('legend', {}, 'Memory decay: half-life in days (empty = no decay; pinned memories never decay)'),
      h('p', {}, h('label', { for: 'decay-turn' }, 'Memories from turns '), turnDays),
      h('p', {}, h('label', { for: 'decay-document' }, 'Memories from documents '), documentDays),
    ),
    h('button', { type: 'submit' }, 'Save settings'),
  );
  return form;
}
