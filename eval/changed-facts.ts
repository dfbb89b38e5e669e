/**
 * Current truth through the public API (issues 32 and 39): each changed-fact conversation is learned
 * by a new agent (the old statement in January, the new one in April), then asked its question.
 * A fact counts as "newest first" when the first memory of recall's `memory_context` holds the new
 * value and not the old, and as "as_of right" when recall `as_of` an instant between the two
 * statements holds the old value and not the new. Two sets: the issue-32 conversations (the new
 * statement shares words with the old) and the issue-39 ones, changed in everyday words.
 */
import { CHANGED_FACTS, PARAPHRASED_CHANGES, type ChangedFact } from '@memory-agents/core/testing';
import type { EvalEnvironment } from './harness.js';

/** A new agent that learned `fact`'s early turns at `before`, then its late turns at `after` (as core's tests do). */
async function learnChangedFact(env: EvalEnvironment, fact: ChangedFact): Promise<{ agentId: string }> {
  const { service, caller } = env;
  const agent = await service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
  await service.idle();
  const agentId = agent.agent_id;
  const { thread_id: threadId } = await service.threads.create({ caller, agentId, body: {} });
  for (const [turns, timestamp] of [[fact.early, fact.before], [fact.late, fact.after]] as const) {
    await service.observe({ caller, agentId, threadId, body: { observations: turns.map(([speaker, text]) => ({ content: [{ type: 'text' as const, text }], speaker, timestamp })) } });
    await service.idle();
  }
  return { agentId };
}

export type ChangedFactScore = { set: string; name: string; newestFirst: boolean; asOfRight: boolean; first: string };

export const CHANGED_FACT_SETS: Record<string, ChangedFact[]> = { 'shared words (issue 32)': CHANGED_FACTS, 'everyday words (issue 39)': PARAPHRASED_CHANGES };

export async function runChangedFacts(env: EvalEnvironment, onFact: (name: string, done: number, total: number) => void): Promise<ChangedFactScore[]> {
  const scores: ChangedFactScore[] = [];
  const all = Object.entries(CHANGED_FACT_SETS).flatMap(([set, facts]) => facts.map((fact) => ({ set, fact })));
  for (const { set, fact } of all) {
    const { agentId } = await learnChangedFact(env, fact);
    const now = await env.service.recall({ caller: env.caller, agentId, body: { query: fact.question } });
    const first = now.memory_context.split('\n')[0] ?? '';
    const then = await env.service.recall({ caller: env.caller, agentId, body: { query: fact.question, as_of: fact.asOf } });
    scores.push({ set, name: fact.name, first, newestFirst: first.includes(fact.newValue) && !first.includes(fact.oldValue), asOfRight: then.memory_context.includes(fact.oldValue) && !then.memory_context.includes(fact.newValue) });
    await env.service.agents.delete({ caller: env.caller, agentId });
    onFact(fact.name, scores.length, all.length);
  }
  return scores;
}

export function summarizeChangedFacts(scores: ChangedFactScore[]): string {
  const lines = ['| set | facts | newest first | as_of right | newest not first |', '| --- | --- | --- | --- | --- |'];
  for (const set of Object.keys(CHANGED_FACT_SETS)) {
    const of = scores.filter((score) => score.set === set);
    const missed = of.filter((score) => !score.newestFirst).map((score) => score.name);
    lines.push(`| ${set} | ${of.length} | ${of.filter((score) => score.newestFirst).length} | ${of.filter((score) => score.asOfRight).length} | ${missed.join(', ') || '-'} |`);
  }
  return lines.join('\n');
}
