import { refusal } from '../__fixtures__/refusal.js';
import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';

// An agent's extraction policy redacts personal data before anything is stored (issue 44): the
// turn store, the memories and their keywords and vectors, and therefore every read, never hold it.

const SAID =
  'Please charge my card 4111 1111 1111 1111 and mail the receipt to ana.lopez@example.com; ' +
  'my IBAN is DE89 3704 0044 0532 0130 00, call +49 30 901820, staff id EMP-123456. Order 4000123456 costs 1,299.99 euros on 2024-05-08.';
const REDACTED =
  'Please charge my card [redacted:card_number] and mail the receipt to [redacted:email]; ' +
  'my IBAN is [redacted:iban], call [redacted:phone], staff id [redacted:employee_id]. Order 4000123456 costs 1,299.99 euros on 2024-05-08.';
const SECRETS = ['4111', 'ana.lopez', 'example.com', 'DE89', '3704', '901820', 'EMP-123456'];

async function policyWorld() {
  const setup = await learningService({ redaction: { patterns: { employee_id: /\bEMP-\d{6}\b/ } } });
  const { service, owner } = setup;
  const created = await service.agents.create({
    caller: owner,
    body: { agent_config: { role: 'billing', objective: 'help', extraction_policy: { redact: ['card_number', 'email', 'iban', 'phone', 'employee_id'] } } },
  });
  await service.idle();
  const agentId = created.agent_id;
  const threadId = (await service.threads.create({ caller: owner, agentId, body: {} })).thread_id;
  return { ...setup, agentId, threadId };
}

describe('extraction_policy.redact', () => {
  it('masks every named kind in the turn store, the memories and search, and leaves ordinary numbers', async () => {
    const { service, owner, agentId, threadId } = await policyWorld();
    const accepted = await service.observe({ caller: owner, agentId, threadId, body: { observations: [{ content: [{ type: 'text', text: SAID }] }] } });
    await service.idle();
    expect((await service.observationStatus({ caller: owner, agentId, threadId, observationId: accepted.observation_id })).status).toBe('committed');

    const turns = await service.threads.turns({ caller: owner, agentId, threadId, query: {} });
    expect(turns.turns.map((turn) => turn.text)).toEqual([REDACTED]);
    // The receipt names each rule that fired on the turn.
    const receipt = await service.observationReceipt({ caller: owner, agentId, threadId, observationId: accepted.observation_id });
    expect(receipt.turns[0]!.redacted).toEqual([
      { kind: 'card_number', count: 1 },
      { kind: 'email', count: 1 },
      { kind: 'iban', count: 1 },
      { kind: 'phone', count: 1 },
      { kind: 'employee_id', count: 1 },
    ]);
    const memories = await service.memories.list({ caller: owner, agentId, query: {} });
    expect(memories.memories.map((memory) => memory.text)).toEqual([REDACTED]);
    const everything = JSON.stringify([turns, memories, await service.recall({ caller: owner, agentId, body: { query: 'What card and e-mail address did I give?' } })]);
    for (const secret of SECRETS) expect(everything, secret).not.toContain(secret);
    // Nothing of the card number is searchable either (keywords are made from the stored text).
    const search = await service.memories.search({ caller: owner, agentId, body: { query: '4111 1111 1111 1111' } });
    expect(search.hits.filter((hit) => hit.signals.full_text > 0)).toEqual([]);
  });

  it('applies to observe-and-enrich turns too', async () => {
    const { service, owner, agentId, threadId } = await policyWorld();
    await service.observeAndEnrich({ caller: owner, agentId, threadId, body: { turn_id: 'enrich-1', message: 'Reach me at ana.lopez@example.com please.' } });
    await service.idle();
    const turns = await service.threads.turns({ caller: owner, agentId, threadId, query: {} });
    expect(turns.turns.map((turn) => turn.text)).toEqual(['Reach me at [redacted:email] please.']);
  });

  it("keeps a chat turn's thread messages redacted too, while the caller gets its answer as it is", async () => {
    const { service, owner, agentId, threadId } = await policyWorld();
    await service.observeAndRespond({ caller: owner, agentId, threadId, body: { turn_id: 'respond-1', message: 'My card is 4111 1111 1111 1111, remember it.' } });
    await service.idle();
    const thread = await service.threads.get({ caller: owner, agentId, threadId });
    const kept = JSON.stringify(thread.messages);
    expect(kept).toContain('[redacted:card_number]');
    expect(kept).not.toContain('4111');
  });

  it('refuses a kind the server does not know, naming the ones it does (422 invalid_request)', async () => {
    const { service, owner } = await policyWorld();
    const refused = await refusal(service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o', extraction_policy: { redact: ['email', 'passport'] } } } }));
    expect(refused).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(refused.message).toContain('passport');
    expect(refused.message).toContain('card_number, email, iban, phone, employee_id');
    expect(await refusal(service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o', extraction_policy: { redact: ['email', 'email'] } } } }))).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(await refusal(service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o', extraction_policy: { phone_region: 'germany' } } } as never }))).toMatchObject({ status: 422, code: 'invalid_request' });
  });

  it('a PATCH that omits the policy keeps it; an empty policy ends it', async () => {
    const { service, owner, agentId, threadId } = await policyWorld();
    const patched = await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'billing 2', objective: 'help' } } });
    expect(patched.agent_config.extraction_policy?.redact).toContain('email');
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'billing 3', objective: 'help', extraction_policy: {} } } });
    await service.observe({ caller: owner, agentId, threadId, body: { observations: [{ content: [{ type: 'text', text: 'Write to ana.lopez@example.com.' }] }] } });
    await service.idle();
    const turns = await service.threads.turns({ caller: owner, agentId, threadId, query: {} });
    expect(turns.turns.map((turn) => turn.text)).toEqual(['Write to ana.lopez@example.com.']);
  });
});
