// Include and exclude rules of an agent's extraction policy (issue 44) through the service: an
// excluded turn is stored (it was observed) but never learned, its receipt names the rule; include
// rules keep only the turns they match; bad rules are 422.
import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { refusal } from '../__fixtures__/refusal.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';

const said = (speaker: string, text: string) => ({ speaker, timestamp: '2026-01-01T10:00:00Z', content: [{ type: 'text' as const, text }] });

async function withPolicy(extraction_policy: Record<string, unknown>) {
  const setup = await learningService({ index: inMemoryMemoryIndex() });
  await setup.service.agents.update({ caller: setup.owner, agentId: setup.agentId, body: { agent_config: { role: 'assistant', objective: 'remember', extraction_policy } } });
  const observe = async (observations: ReturnType<typeof said>[]) => {
    const accepted = await setup.service.observe({ caller: setup.owner, agentId: setup.agentId, threadId: setup.threadId, body: { observations } });
    await setup.service.idle();
    return setup.service.observationReceipt({ caller: setup.owner, agentId: setup.agentId, threadId: setup.threadId, observationId: accepted.observation_id });
  };
  const learned = async () => (await setup.service.memories.list({ caller: setup.owner, agentId: setup.agentId })).memories.map((memory) => memory.text).sort();
  return { ...setup, observe, learned };
}

describe('extraction policy: include and exclude rules', () => {
  it('never learns a turn an exclude rule matches, stores it, and says which rule in the receipt', async () => {
    const { service, owner, agentId, threadId, observe, learned } = await withPolicy({ exclude: [{ keywords: ['password', 'PIN code'] }, { speakers: ['bot'] }] });
    const receipt = await observe([
      said('ana', 'My wifi password is hunter2.'),
      said('ana', 'My PIN code is 4921.'),
      said('ana', 'Passwordless login is enabled.'),
      said('bot', 'Reminder: standup at nine.'),
      said('ana', 'I prefer tea over coffee.'),
    ]);
    expect(await learned()).toEqual(['I prefer tea over coffee.', 'Passwordless login is enabled.']);
    expect(receipt.status).toBe('committed');
    expect(receipt.turns.map((turn) => [turn.outcome, turn.reason, turn.excluded_by])).toEqual([
      ['skipped', 'excluded_by_policy', 'extraction_policy.exclude[0] (keyword "password" or "PIN code")'],
      ['skipped', 'excluded_by_policy', 'extraction_policy.exclude[0] (keyword "password" or "PIN code")'],
      ['learned', null, null],
      ['skipped', 'excluded_by_policy', 'extraction_policy.exclude[1] (speaker bot)'],
      ['learned', null, null],
    ]);
    // Observed all the same: the thread's turns hold every one.
    const { turns } = await service.threads.turns({ caller: owner, agentId, threadId });
    expect(turns.map((turn) => turn.text)).toContain('My wifi password is hunter2.');
    // Recall never finds what was excluded.
    expect((await service.recall({ caller: owner, agentId, body: { query: 'What is my wifi password?' } })).memory_context).not.toContain('hunter2');
  });

  it('with include rules, learns only the turns one matches (and exclude still wins)', async () => {
    const { observe, learned } = await withPolicy({ include: [{ keywords: ['prefer', 'decided'] }, { speakers: ['lead'] }], exclude: [{ keywords: ['salary'] }] });
    const receipt = await observe([
      said('ana', 'I prefer window seats.'),
      said('ana', 'Nice weather today.'),
      said('lead', 'We ship on Friday.'),
      said('lead', 'We decided the salary bands.'),
    ]);
    expect(await learned()).toEqual(['I prefer window seats.', 'We ship on Friday.']);
    expect(receipt.turns.map((turn) => turn.excluded_by)).toEqual([null, 'extraction_policy.include (the turn matches none of its 2 rules)', null, 'extraction_policy.exclude[0] (keyword "salary")']);
  });

  it('refuses a rule with no field, an unknown field, or too many rules (422)', async () => {
    const { service, owner, agentId } = await learningService();
    for (const extraction_policy of [{ exclude: [{}] }, { exclude: [{ words: ['x'] }] }, { include: Array.from({ length: 21 }, () => ({ keywords: ['x'] })) }, { exclude: [{ keywords: [] }] }]) {
      const refused = await refusal(service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'r', objective: 'o', extraction_policy } as never } }));
      expect(refused, JSON.stringify(extraction_policy)).toMatchObject({ status: 422, code: 'invalid_request' });
    }
  });

  it('excludes turns by pattern (case-insensitive, with the other fields of the rule), and names the pattern in the receipt', async () => {
    const { observe, learned } = await withPolicy({ exclude: [{ patterns: ['order #?\\d{4,12}'], speakers: ['ana'] }] });
    const receipt = await observe([said('ana', 'Where is ORDER #48213?'), said('bo', 'Order 48213 shipped.'), said('ana', 'I ordered tea.')]);
    expect(await learned()).toEqual(['I ordered tea.', 'Order 48213 shipped.']);
    expect(receipt.turns.map((turn) => turn.excluded_by)).toEqual(['extraction_policy.exclude[0] (speaker ana, pattern /order #?\\d{4,12}/)', null, null]);
  });

  it('refuses a pattern that is not a regular expression, or whose matching can blow up, with a sentence saying why (422)', async () => {
    const { service, owner, agentId } = await learningService();
    const cases: [string, string][] = [
      ['(unclosed', 'is not a valid regular expression'],
      ['(a+)+$', 'repeats a group that itself holds a repetition or an alternation'],
      ['(x|xy)*z', 'repeats a group that itself holds a repetition or an alternation'],
      ['(?:\\w+\\s?)*$', 'repeats a group'],
      ['\\d+\\d+x', 'more than one unbounded repetition'],
      ['.*a.*b', 'more than one unbounded repetition'],
      ['(\\w)\\1', 'backreference'],
      ['(?<=x)y', 'lookahead or lookbehind'],
      ['x'.repeat(201), ''],
    ];
    for (const [pattern, sentence] of cases) {
      const refused = await refusal(service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'r', objective: 'o', extraction_policy: { exclude: [{ patterns: [pattern] }] } } } }));
      expect(refused, pattern).toMatchObject({ status: 422, code: 'invalid_request' });
      expect(refused.message, pattern).toContain(sentence);
    }
    const many = await refusal(service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'r', objective: 'o', extraction_policy: { exclude: [{ patterns: Array.from({ length: 11 }, (_, i) => `p${i}`) }] } } } }));
    expect(many).toMatchObject({ status: 422, code: 'invalid_request' });
    // Ordinary patterns pass: bounded repetitions, one unbounded one, classes, alternation not repeated.
    for (const pattern of ['\\b(?:visa|mastercard)\\b', 'ticket-[A-Z]{2,4}-\\d+', '^(re|fwd): .*$', '[\\w.]{1,20}@example\\.com', 'a{2}b?(cd)?']) {
      const accepted = await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'r', objective: 'o', extraction_policy: { exclude: [{ patterns: [pattern] }] } } } });
      expect(accepted.agent_config.extraction_policy?.exclude?.[0]?.patterns, pattern).toEqual([pattern]);
    }
  });
});
