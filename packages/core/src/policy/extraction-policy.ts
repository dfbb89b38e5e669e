import { ServiceError } from '../errors/index.js';
import type { NewTurn } from '../observations/new-job.js';
import type { AgentConfig, AgentRecord } from '../ports/store/index.js';
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

/** The turns with the agent's redaction applied (the same array when the policy redacts nothing). */
export async function redactTurns<T extends NewTurn>(context: ServiceContext, where: { organizationId: string; agentId: string }, turns: T[]): Promise<T[]> {
  const agent: AgentRecord | null = await context.store.agents.get(where);
  const policy = agent ? redactionPolicyOf(agent.config) : null;
  if (!policy) return turns;
  return turns.map((turn) => {
    const { text } = redact(turn.text, policy, context.redactionPatterns);
    return text === turn.text ? turn : { ...turn, text };
  });
}
