import { randomBytes } from 'node:crypto';
import { createMemoryService, defaultMemoryWriter, silentLogger, type MemoryService, type MemoryWriter } from '@memory-agents/core';
import { mockEmbedder, postgresUrl } from '@memory-agents/core/testing';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store.js';

/** The default writer's memories, reporting 10 input and 2 output tokens of `scripted-llm` per turn (a test double of an LLM writer). */
function scriptedWriter(): MemoryWriter {
  const inner = defaultMemoryWriter();
  return {
    specificationVersion: 'v1',
    id: 'scripted-writer',
    async write(request) {
      const result = await inner.write(request);
      return { ...result, usage: [{ model: 'scripted-llm', inputTokens: 10 * request.turns.length, outputTokens: 2 * request.turns.length }] };
    },
  };
}

/** An embedder reporting one input token per text (a test double of a network embedder). */
function scriptedEmbedder() {
  const inner = mockEmbedder({ id: 'scripted-embedder:16', dimensions: 16 });
  return { ...inner, embed: async (request: Parameters<typeof inner.embed>[0]) => ({ ...(await inner.embed(request)), usage: { inputTokens: request.texts.length } }) };
}

const say = (text: string) => ({ speaker: 'Dana', timestamp: '2024-01-01T10:00:00Z', content: [{ type: 'text' as const, text }] });

/** Observes four turns through a service on `store` and checks the receipt's model tokens, read back from the store. */
async function expectReceiptTokens(store: ReturnType<typeof postgresStore>): Promise<void> {
  const service: MemoryService = createMemoryService({ store, writer: scriptedWriter(), embedder: scriptedEmbedder(), logger: silentLogger });
  await service.start();
  try {
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const caller = await service.as(org.organizationId);
    const agentId = (await service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } })).agent_id;
    await service.idle();
    const threadId = (await service.threads.create({ caller, agentId, body: {} })).thread_id;
    const texts = ['I live in Paris.', 'I work at Acme as an engineer.', 'My cat is called Pixel.', 'Ok.'];
    const accepted = await service.observe({ caller, agentId, threadId, body: { observations: texts.map(say) } });
    await service.idle();
    const receipt = await service.observationReceipt({ caller, agentId, threadId, observationId: accepted.observation_id });
    expect(receipt.status).toBe('committed');
    const [llm, embedder] = receipt.model_tokens;
    expect(llm).toEqual({ model: 'scripted-llm', input_tokens: 40, output_tokens: 8 });
    expect(embedder).toMatchObject({ model: 'scripted-embedder:16', output_tokens: 0 });
    expect(embedder!.input_tokens).toBeGreaterThanOrEqual(texts.length);
    for (const [m, total] of receipt.model_tokens.entries()) {
      expect(receipt.turns.reduce((sum, turn) => sum + turn.model_tokens[m]!.input_tokens, 0)).toBe(total.input_tokens);
      expect(receipt.turns.reduce((sum, turn) => sum + turn.model_tokens[m]!.output_tokens, 0)).toBe(total.output_tokens);
    }
    // 40 input tokens over 16, 30, 23 and 3 characters (72): 8, 16, 12, and the remainder 4.
    expect(receipt.turns.map((turn) => turn.model_tokens[0]!.input_tokens)).toEqual([8, 16, 12, 4]);
  } finally {
    await service.stop();
  }
}

describe('receipt model tokens on the PostgreSQL store (issue 33)', () => {
  it('PGlite: records each batch and reports per turn and per model', async () => {
    await expectReceiptTokens(postgresStore({ dataDir: 'memory://' }));
  });

  const databaseUrl = postgresUrl('receipt model tokens on PostgreSQL');
  it.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL): the same', async () => {
    const schema = `ma_tokens_${randomBytes(6).toString('hex')}`;
    try {
      await expectReceiptTokens(postgresStore({ connectionString: databaseUrl!, schema }));
    } finally {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  });
});
