import type { ModelMessage, WriterTurn } from '@memory-agents/core/adapter';

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Instructions for extracting facts from a batch of turns (one model call per batch). */
export function extractionMessages(turns: readonly WriterTurn[], maxFactsPerTurn: number): ModelMessage[] {
  const system = [
    'You turn conversation turns into memories: short, self-contained facts worth remembering about the people, their lives, plans, preferences, events, and the things they said or shared.',
    '',
    'Rules:',
    '- Each fact must make sense on its own: use names instead of pronouns ("Ana\'s sister Marta", not "her sister") and say who it is about.',
    '- Every turn shows when it was said. Resolve relative dates ("yesterday", "last week", "next Friday", "two years ago") against the timestamp of the turn they appear in, and write the absolute date in the fact (for example "on 2024-05-03" or "in April 2024"). Never leave a relative date in a fact.',
    '- Cite the number(s) of the turn(s) each fact comes from in "turns".',
    '- Keep names, numbers, places, titles and quotes exactly as written.',
    '- Skip greetings and filler; a turn may give no facts.',
    `- At most ${maxFactsPerTurn} facts per turn.`,
    '',
    'Reply with JSON only, in exactly this shape:',
    '{"facts":[{"text":"Ana went to the dentist on 2024-05-03.","turns":[1],"speaker":"Ana","occurred_at":"2024-05-03","keywords":["Ana","dentist"]}]}',
    '"occurred_at" is the date the fact is about (YYYY-MM-DD, or a full ISO date-time), resolved as above; null when the turn gives no date for it.',
    '"keywords" lists the people, places, organisations, things and dates the fact names.',
    'Reply {"facts":[]} when there is nothing worth remembering.',
  ].join('\n');
  const listed = turns.map((turn, position) => {
    const when = `${turn.timestamp}${weekday(turn.timestamp)}`;
    const tags = turn.tags.length > 0 ? ` | tags: ${turn.tags.join(', ')}` : '';
    return `Turn ${position + 1} | speaker: ${turn.speaker} | said at: ${when}${tags}\n${turn.text}`;
  });
  return [
    { role: 'system', content: system },
    { role: 'user', content: `Turns:\n\n${listed.join('\n\n')}` },
  ];
}

export type ReconcileFact = { text: string; occurredAt: string | null };
export type ReconcileCandidate = { ref: string; text: string; occurredAt: string | null; speaker: string | null };

/** Instructions for comparing new facts with similar memories already held (one bounded call per batch). */
export function reconciliationMessages(facts: readonly ReconcileFact[], candidates: readonly ReconcileCandidate[]): ModelMessage[] {
  const system = [
    'You keep a memory store consistent. You get new facts and similar memories already stored.',
    'For each new fact choose one action:',
    '- "add": it is new information (also when it only resembles a stored memory).',
    '- "update": it corrects, completes or supersedes stored memories (a new address, job, number, price or date); list them in "targets" and give in "text" the one fact that replaces them, saying what changed and when (for example "Ana moved from Porto to Lisbon in May 2024."). The old memories are kept as history.',
    '- "delete": it only says that stored memories are no longer true (for example "I cancelled the trip"); list them in "targets". They are kept as history, marked as no longer true.',
    '- "noop": a stored memory already says exactly the same.',
    'Only use targets from the list of stored memories. Facts you do not mention are added.',
    '',
    'Reply with JSON only, in exactly this shape:',
    '{"decisions":[{"fact":1,"action":"update","targets":["M2"],"text":"Ana moved from Porto to Lisbon in May 2024."}]}',
  ].join('\n');
  const listedFacts = facts.map((fact, position) => `F${position + 1}. ${fact.text}${fact.occurredAt ? ` (date: ${fact.occurredAt})` : ''}`);
  const listedMemories = candidates.map(
    (candidate) =>
      `${candidate.ref}. ${candidate.text}${candidate.occurredAt ? ` (date: ${candidate.occurredAt})` : ''}${candidate.speaker ? ` (speaker: ${candidate.speaker})` : ''}`,
  );
  return [
    { role: 'system', content: system },
    { role: 'user', content: `New facts:\n${listedFacts.join('\n')}\n\nStored memories:\n${listedMemories.join('\n')}` },
  ];
}

/** The message of the single repair attempt after an unreadable reply. */
export function repairMessages(messages: readonly ModelMessage[], reply: string, problem: string): ModelMessage[] {
  return [
    ...messages,
    { role: 'assistant', content: reply },
    { role: 'user', content: `Your reply could not be used: ${problem}. Reply again with only the JSON object in the shape described, and nothing else.` },
  ];
}

function weekday(timestamp: string): string {
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? '' : ` (${WEEKDAYS[date.getUTCDay()]})`;
}
