import { describe, expect, it } from 'vitest';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { MemoryWriter } from '../ports/memory-writer.js';
import { learningService, turns } from '../__fixtures__/learning-service.js';

/** A writer that holds every batch until `open()` is called, so the agent stays busy learning. */
function gatedWriter() {
  const base = defaultMemoryWriter();
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const writer: MemoryWriter = {
    specificationVersion: 'v1',
    id: 'gated-writer',
    async write(request) {
      await gate;
      return base.write(request);
    },
  };
  return { writer, open };
}

const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; status: number; message: string };
  }
  throw new Error('accepted');
};

/** @see issue "Reliability hardening", item 6 */
describe('observe with an Idempotency-Key', () => {
  it('replays the first 202 for the same key and body, even while the agent is busy learning it, and learns it once', async () => {
    const gated = gatedWriter();
    const { service, caller, owner, agentId, threadId } = await learningService({ writer: gated.writer });
    const body = { observations: turns(3) };
    const first = await service.observe({ caller: await caller(), agentId, threadId, body, idempotencyKey: 'key-1' });
    // The agent is busy with that job: a new observe is refused, the retry of the first is not.
    expect(await refusal(service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(1, 'other') } }))).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
    const again = await service.observe({ caller: await caller(), agentId, threadId, body, idempotencyKey: 'key-1' });
    expect(again).toEqual(first);
    gated.open();
    await service.idle();
    const status = await service.observationStatus({ caller: owner, agentId, threadId, observationId: first.observation_id });
    expect(status).toMatchObject({ status: 'committed', turns_total: 3 });
    const logs = await service.logs({ caller: owner, agentId, query: {} });
    expect(logs.entries.filter((entry) => entry.route === 'observe')).toHaveLength(1);
    expect(await service.observe({ caller: await caller(), agentId, threadId, body, idempotencyKey: 'key-1' })).toEqual(first);
  });

  it('refuses the key reused for another body or another thread with 409 conflict', async () => {
    const { service, caller, agentId, threadId } = await learningService();
    await service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(1) }, idempotencyKey: 'key-2' });
    await service.idle();
    expect(await refusal(service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(2) }, idempotencyKey: 'key-2' }))).toMatchObject({ code: 'conflict', status: 409 });
    const other = await service.threads.create({ caller: await caller(), agentId, body: {} });
    expect(await refusal(service.observe({ caller: await caller(), agentId, threadId: other.thread_id, body: { observations: turns(1) }, idempotencyKey: 'key-2' }))).toMatchObject({ code: 'conflict' });
  });

  it('binds nothing when the request is refused, so the same key can be sent again', async () => {
    const gated = gatedWriter();
    const { service, caller, agentId, threadId } = await learningService({ writer: gated.writer });
    await service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(1) } });
    // Busy: 429, and the key stays free.
    expect(await refusal(service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(2) }, idempotencyKey: 'key-3' }))).toMatchObject({ code: 'rate_limit_exceeded' });
    gated.open();
    await service.idle();
    const accepted = await service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(2) }, idempotencyKey: 'key-3' });
    expect(accepted.accepted).toBe(true);
  });

  it('keeps keys per organization and refuses a key over 255 characters with 400', async () => {
    const first = await learningService();
    const second = await learningService();
    const a = await first.service.observe({ caller: await first.caller(), agentId: first.agentId, threadId: first.threadId, body: { observations: turns(1) }, idempotencyKey: 'shared' });
    const b = await second.service.observe({ caller: await second.caller(), agentId: second.agentId, threadId: second.threadId, body: { observations: turns(1) }, idempotencyKey: 'shared' });
    expect(a.observation_id).not.toBe(b.observation_id);
    expect(await refusal(first.service.observe({ caller: await first.caller(), agentId: first.agentId, threadId: first.threadId, body: { observations: turns(1) }, idempotencyKey: 'k'.repeat(256) }))).toMatchObject({
      code: 'invalid_request',
      status: 400,
    });
  });

  it('takes over a key a stopped process left in flight, and refuses one a running request holds with 409', async () => {
    const store = inMemoryStore();
    const { service, caller, organizationId, agentId, threadId } = await learningService({ store });
    const claim = (key: string, at: number) =>
      store.idempotency.claim({ record: { organizationId, key, fingerprint: 'of a request that never answered', createdAt: new Date(at).toISOString() }, notBefore: new Date(0).toISOString() });
    // Claimed before this service started (its store is not shared): that process is gone.
    await claim('left-behind', Date.now() - 60_000);
    const accepted = await service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(1) }, idempotencyKey: 'left-behind' });
    expect(accepted.accepted).toBe(true);
    // Claimed now: a request of this process is still running it.
    await claim('running', Date.now());
    expect(await refusal(service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(1) }, idempotencyKey: 'running' }))).toMatchObject({ code: 'conflict', status: 409 });
  });

  it('replays observe-and-enrich verbatim and stores its turn once', async () => {
    const { service, caller, owner, agentId, threadId } = await learningService();
    const body = { turn_id: 't1', message: 'Remember that the launch is on Friday.' };
    const first = await service.observeAndEnrich({ caller: await caller(), agentId, threadId, body, idempotencyKey: 'enrich-1' });
    const again = await service.observeAndEnrich({ caller: await caller(), agentId, threadId, body, idempotencyKey: 'enrich-1' });
    expect(again).toEqual(first);
    await service.idle();
    const logs = await service.logs({ caller: owner, agentId, query: {} });
    expect(logs.entries.filter((entry) => entry.route === 'observe_and_enrich')).toHaveLength(1);
  });
});
