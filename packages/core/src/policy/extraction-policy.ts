import { ServiceError } from '../errors/index.js';
import type { NewTurn } from '../observations/new-job.js';
import type { AgentConfig, AgentRecord, TurnRule } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
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

/** 422 `invalid_request` for a kind this service does not know, naming the ones it does. */
export function checkExtractionPolicy(context: Pick<ServiceContext, 'redactionPatterns'>, config: AgentConfig): void {
  const known = redactionKinds(context);
  const unknown = (config.extraction_policy?.redact ?? []).filter((kind) => !known.includes(kind));
  if (unknown.length > 0) {
    throw new ServiceError('invalid_request', `agent_config.extraction_policy.redact names ${unknown.join(', ')}, which this server does not know; the kinds are ${known.join(', ')}.`, { status: 422 });
  }
}

/**
 * The config a PATCH stores keeps an `extraction_policy` the body omits: a redaction rule never
 * lapses because a client that does not know the extension changed the role. `"extraction_policy":
 * {}` ends it.
 */
export function keepExtractionPolicy(config: AgentConfig, stored: AgentConfig): AgentConfig {
  return config.extraction_policy === undefined && stored.extraction_policy !== undefined ? { ...config, extraction_policy: stored.extraction_policy } : config;
}

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
 * phrase, case-insensitive). Document pieces are never excluded.
 */
export function exclusionOf(config: AgentConfig, turn: Pick<NewTurn, 'speaker' | 'text' | 'details'>): string | null {
  const policy = config.extraction_policy;
  if (!policy || (policy.exclude === undefined && policy.include === undefined) || turn.details?.sourceId !== undefined) return null;
  const text = turn.text.toLowerCase();
  const matched = (rule: TurnRule) =>
    (rule.speakers === undefined || rule.speakers.includes(turn.speaker)) &&
    (rule.keywords === undefined || rule.keywords.some((keyword) => new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(keyword.toLowerCase())}(?![\\p{L}\\p{N}])`, 'u').test(text)));
  const excluded = (policy.exclude ?? []).findIndex(matched);
  if (excluded >= 0) return `extraction_policy.exclude[${excluded}] (${describeRule(policy.exclude![excluded]!)})`;
  if (policy.include !== undefined && !policy.include.some(matched)) return `extraction_policy.include (the turn matches none of its ${policy.include.length} rules)`;
  return null;
}

function describeRule(rule: TurnRule): string {
  return [rule.speakers ? `speaker ${rule.speakers.join(' or ')}` : null, rule.keywords ? `keyword ${rule.keywords.map((k) => `"${k}"`).join(' or ')}` : null].filter(Boolean).join(', ');
}

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
