import { ServiceError } from '../errors/index.js';
import type { NewTurn } from '../observations/new-job.js';
import type { AgentConfig, AgentRecord, ExtractionPolicy, TurnRule } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { matchesPattern, patternProblem } from './patterns.js';
import { BUILT_IN_REDACTIONS, redact, type RedactionPolicy } from './redaction.js';

/**
 * An agent's extraction policy (agent config `extraction_policy`, an extension, issue 44): today
 * its redaction. Every way a turn enters (observe, observe-and-respond, observe-and-enrich,
 * observe-file, a document converted later) passes through {@link redactTurns} before the turn is
 * stored, so nothing downstream (the turn store, the writer, keywords, vectors, exports) ever holds
 * what the policy names; a chat turn's thread messages are stored through {@link redactForAgent}.
 */

/** The kinds an agent config may name on this service: the built-in ones and the operator's. */
export function redactionKinds(context: Pick<ServiceContext, 'redactionPatterns'>): string[] {
  return [...BUILT_IN_REDACTIONS, ...context.redactionPatterns.keys()];
}

/**
 * 422 `invalid_request` for a policy this service cannot honour: a redaction kind it does not know
 * (naming the ones it does), a pattern refused by `patterns.ts` (saying why), a rule naming a
 * category the policy does not list.
 */
export function checkExtractionPolicy(context: Pick<ServiceContext, 'redactionPatterns'>, config: AgentConfig): void {
  const policy = config.extraction_policy;
  const invalid = (message: string) => new ServiceError('invalid_request', message, { status: 422 });
  const known = redactionKinds(context);
  const unknown = (policy?.redact ?? []).filter((kind) => !known.includes(kind));
  if (unknown.length > 0) {
    throw invalid(`agent_config.extraction_policy.redact names ${unknown.join(', ')}, which this server does not know; the kinds are ${known.join(', ')}.`);
  }
  const listed = new Set((policy?.categories ?? []).map((category) => category.name));
  for (const side of ['exclude', 'include'] as const) {
    (policy?.[side] ?? []).forEach((rule, i) => {
      rule.patterns?.forEach((pattern, j) => {
        const problem = patternProblem(pattern);
        if (problem) throw invalid(`agent_config.extraction_policy.${side}[${i}].patterns[${j}] ${problem}.`);
      });
      const unlisted = (rule.categories ?? []).filter((name) => !listed.has(name));
      if (unlisted.length > 0) {
        throw invalid(`agent_config.extraction_policy.${side}[${i}].categories names ${unlisted.join(', ')}, which extraction_policy.categories does not list.`);
      }
    });
  }
}

/**
 * The config a PATCH stores keeps an `extraction_policy` the body omits: a redaction rule never
 * lapses because a client that does not know the extension changed the role. `"extraction_policy":
 * {}` ends it. The policy's `version` is the service's ({@link stampPolicyVersion}).
 */
export function keepExtractionPolicy(config: AgentConfig, stored: AgentConfig): AgentConfig {
  const kept = config.extraction_policy === undefined && stored.extraction_policy !== undefined ? { ...config, extraction_policy: stored.extraction_policy } : config;
  return stampPolicyVersion(kept, stored);
}

/**
 * The config with its policy's `version` set by the service (a version sent is ignored): the stored
 * one while the policy is unchanged, one more when it changed (1 for a first policy). A config
 * without a policy has none (version 0: memories learned under it record none).
 */
export function stampPolicyVersion(config: AgentConfig, stored: AgentConfig | null): AgentConfig {
  const policy = config.extraction_policy;
  const before = stored?.extraction_policy;
  if (policy === undefined) return config;
  const { version: _sent, ...rules } = policy;
  const { version: storedVersion, ...storedRules } = before ?? {};
  const unchanged = before !== undefined && canonical(rules) === canonical(storedRules);
  const version = unchanged ? (storedVersion ?? 1) : (storedVersion ?? 0) + 1;
  return { ...config, extraction_policy: { ...rules, version } };
}

/** The version of the agent's policy that learning applies (0: none). */
export const policyVersionOf = (config: AgentConfig): number => config.extraction_policy?.version ?? 0;

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item) ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : item,
  );

/** What the agent's policy redacts, or null when nothing. */
export function redactionPolicyOf(config: AgentConfig): RedactionPolicy | null {
  const kinds = config.extraction_policy?.redact ?? [];
  return kinds.length === 0 ? null : { kinds, phoneRegion: config.extraction_policy?.phone_region ?? null };
}

/** `text` with the agent's redaction applied (itself when the policy redacts nothing). */
export function redactForAgent(context: Pick<ServiceContext, 'redactionPatterns'>, config: AgentConfig, text: string): string {
  const policy = redactionPolicyOf(config);
  return policy ? redact(text, policy, context.redactionPatterns).text : text;
}

/**
 * The turns with the agent's redaction applied, and the rule that excludes a turn from learning
 * recorded in its details (issue 44); the same array when the policy does neither.
 */
export async function redactTurns<T extends NewTurn>(context: ServiceContext, where: { organizationId: string; agentId: string }, turns: T[]): Promise<T[]> {
  const agent: AgentRecord | null = await context.store.agents.get(where);
  if (!agent) return turns;
  const policy = redactionPolicyOf(agent.config);
  const hasRules = agent.config.extraction_policy?.exclude !== undefined || agent.config.extraction_policy?.include !== undefined;
  if (!policy && !hasRules) return turns;
  return turns.map((turn) => {
    const text = policy ? redact(turn.text, policy, context.redactionPatterns).text : turn.text;
    const excludedBy = hasRules ? exclusionOf(agent.config, { ...turn, text }) : null;
    if (text === turn.text && excludedBy === null) return turn;
    return { ...turn, text, ...(excludedBy === null ? {} : { details: { ...(turn.details ?? {}), excludedBy } }) };
  });
}

/**
 * The rule of the agent's policy that keeps the writer from a said turn (issue 44), as the sentence
 * its receipt shows, or null when the turn is learned: the first `exclude` rule it matches, else,
 * when `include` rules exist and it matches none, that. A rule matches when each field it gives
 * does (the speaker is one of `speakers`; the text holds one of `keywords` as a whole word or
 * phrase, case-insensitive; the text matches one of `patterns`). A rule's `categories` are
 * checked on the memories ({@link memoryExclusionOf}): an exclude rule naming categories never
 * keeps a turn from the writer, an include rule matches a turn whatever its categories. Document
 * pieces are never excluded.
 */
export function exclusionOf(config: AgentConfig, turn: Pick<NewTurn, 'speaker' | 'text' | 'details'>): string | null {
  const policy = config.extraction_policy;
  if (!policy || (policy.exclude === undefined && policy.include === undefined) || turn.details?.sourceId !== undefined) return null;
  const excluded = (policy.exclude ?? []).findIndex((rule) => rule.categories === undefined && turnMatches(rule, turn));
  if (excluded >= 0) return `extraction_policy.exclude[${excluded}] (${describeRule(policy.exclude![excluded]!)})`;
  if (policy.include !== undefined && !policy.include.some((rule) => turnMatches(rule, turn))) return `extraction_policy.include (the turn matches none of its ${policy.include.length} rules)`;
  return null;
}

/**
 * The rule that keeps a memory of category `category` (null: none) learned from `turn` out of the
 * index (issue 44), as the sentence its receipt shows, or null when it is kept: the first `exclude`
 * rule naming its category whose other fields match the turn; else, when an `include` rule names
 * categories, the include rules when none matches the turn and the category; else, with
 * `only_categories`, a memory without a category. Document pieces are never excluded.
 */
export function memoryExclusionOf(policy: ExtractionPolicy | undefined, turn: { speaker: string; text: string; document: boolean }, category: string | null): string | null {
  if (!policy || turn.document) return null;
  const excluded = (policy.exclude ?? []).findIndex((rule) => rule.categories !== undefined && category !== null && rule.categories.includes(category) && turnMatches(rule, turn));
  if (excluded >= 0) return `extraction_policy.exclude[${excluded}] (${describeRule(policy.exclude![excluded]!)})`;
  const include = policy.include ?? [];
  if (include.some((rule) => rule.categories !== undefined) && !include.some((rule) => (rule.categories === undefined || (category !== null && rule.categories.includes(category))) && turnMatches(rule, turn))) {
    return `extraction_policy.include (the memory${category === null ? ', of no category,' : ` of category ${category}`} matches none of its ${include.length} rules)`;
  }
  if (category === null && policy.only_categories === true && (policy.categories?.length ?? 0) > 0) return 'extraction_policy.only_categories (the memory fits none of the categories)';
  return null;
}

/** Whether the turn fields of `rule` (speakers, keywords, patterns) match the turn. */
function turnMatches(rule: TurnRule, turn: { speaker: string; text: string }): boolean {
  if (rule.speakers !== undefined && !rule.speakers.includes(turn.speaker)) return false;
  if (rule.keywords !== undefined) {
    const text = turn.text.toLowerCase();
    // A plain substring test first: the word-boundary expression only runs where the keyword occurs.
    if (!rule.keywords.some((keyword) => text.includes(keyword.toLowerCase()) && keywordPattern(keyword).test(text))) return false;
  }
  return rule.patterns === undefined || matchesPattern(rule.patterns, turn.text);
}

const keywordPatterns = new Map<string, RegExp>();
function keywordPattern(keyword: string): RegExp {
  let pattern = keywordPatterns.get(keyword);
  if (!pattern) {
    if (keywordPatterns.size >= 1000) keywordPatterns.clear();
    keywordPatterns.set(keyword, (pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(keyword.toLowerCase())}(?![\\p{L}\\p{N}])`, 'u')));
  }
  return pattern;
}

function describeRule(rule: TurnRule): string {
  return [
    rule.speakers ? `speaker ${rule.speakers.join(' or ')}` : null,
    rule.keywords ? `keyword ${rule.keywords.map((k) => `"${k}"`).join(' or ')}` : null,
    rule.patterns ? `pattern ${rule.patterns.map((p) => `/${p}/`).join(' or ')}` : null,
    rule.categories ? `category ${rule.categories.join(' or ')}` : null,
  ]
    .filter(Boolean)
    .join(', ');
}

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
