import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { isServiceError } from '../errors/index.js';
import { inMemoryBlobs } from '../in-memory/in-memory-blobs.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import type { MemoryService } from '../memory-service.js';
import type { Embedder } from '../ports/embedder.js';
import type { MemoryWriter } from '../ports/memory-writer.js';
import { splitLines } from './format.js';

/** The default writer's memories, reporting 10 input and 2 output tokens of `scripted-llm` per turn (a test double of an LLM writer). */
function scriptedWriter(): MemoryWriter {
  const inner = defaultMemoryWriter();
  return {
    specificationVersion: 'v1',
    id: inner.id,
    async write(request) {
      const result = await inner.write(request);
      return { ...result, usage: [{ model: 'scripted-llm', inputTokens: 10 * request.turns.length, outputTokens: 2 * request.turns.length }] };
    },
  };
}

/** The built-in embedder, reporting one input token per text (a test double of a network embedder). */
function scriptedEmbedder(): Embedder {
  const inner = hashedNgramEmbedder();
  return { specificationVersion: inner.specificationVersion, id: inner.id, dimensions: inner.dimensions, embed: async (request) => ({ ...(await inner.embed(request)), usage: { inputTokens: request.texts.length } }) };
}

const say = (text: string, timestamp: string) => ({ speaker: 'Dana', timestamp, content: [{ type: 'text' as const, text }] });

/** An agent whose learning superseded a fact, merged a near-duplicate and used model tokens. */
async function learnedAgent() {
  const world = await learningService({ blobs: inMemoryBlobs(), index: inMemoryMemoryIndex(), writer: scriptedWriter(), embedder: scriptedEmbedder() });
  const { service, owner, agentId, threadId } = world;
  const first = await world.observeSettled([say('I live in Paris.', '2024-01-01T10:00:00Z'), say('I moved to Rome.', '2024-02-01T10:00:00Z'), say('My sister lives in Lisbon now.', '2024-02-02T10:00:00Z')]);
  const other = (await service.threads.create({ caller: owner, agentId, body: {} })).thread_id;
  const second = await world.observeSettled([say('my sister lives in lisbon now', '2024-03-01T10:00:00Z')], { threadId: other });
  const jobs = [
    { threadId, observationId: first.observation_id },
    { threadId: other, observationId: second.observation_id },
  ];
  return { ...world, jobs };
}

async function exported(service: MemoryService, agentId: string): Promise<string> {
  let text = '';
  for await (const line of service.admin.exportAgent({ agentId })) text += line;
  return text;
}

/** Rewrites old ids into the copy's in any JSON value: agent, threads, and jobs (whose suffix learned memory ids carry). */
function rekeyed(value: unknown, imported: { agentId: string; fromAgentId: string; ids: { threads: Record<string, string>; observations: Record<string, string> } }): unknown {
  let text = JSON.stringify(value).replaceAll(imported.fromAgentId, imported.agentId);
  for (const [from, to] of Object.entries(imported.ids.threads)) text = text.replaceAll(from, to);
  for (const [from, to] of Object.entries(imported.ids.observations)) text = text.replaceAll(from.slice(4), to.slice(4));
  return JSON.parse(text);
}

describe('export and import carry what receipts read', () => {
  it('the copy\'s receipts equal the original\'s (merged turns, supersessions, model tokens) and its memories keep their validity', async () => {
    const { service, owner, agentId, jobs } = await learnedAgent();
    const receipts = await Promise.all(jobs.map((job) => service.observationReceipt({ caller: owner, agentId, ...job })));
    expect(receipts[0]!.turns[1]!.superseded).toEqual(receipts[0]!.turns[0]!.memory_ids);
    expect(receipts[1]!.turns[0]).toMatchObject({ outcome: 'merged', memory_ids: receipts[0]!.turns[2]!.memory_ids });
    expect(receipts[0]!.model_tokens[0]).toEqual({ model: 'scripted-llm', input_tokens: 30, output_tokens: 6 });
    const memories = (await service.memories.list({ caller: owner, agentId, query: { include_history: true } as never })).memories;
    expect(memories.some((memory) => memory.valid_to !== null && memory.superseded_by !== null)).toBe(true);
    expect(memories.some((memory) => memory.also_from.length === 1)).toBe(true);

    const text = await exported(service, agentId);
    const learning = text.split('\n').filter((line) => line.includes('"type":"job_learning"'));
    expect(learning).toHaveLength(2);
    const target = await service.admin.createOrganization({ name: 'Other' });
    const caller = await service.as(target.organizationId);
    const imported = await service.admin.importAgent({ organizationId: target.organizationId, open: () => splitLines([text]) });
    expect(imported.counts.job_learning).toBe(2);

    for (const [i, job] of jobs.entries()) {
      const copy = await service.observationReceipt({ caller, agentId: imported.agentId, threadId: imported.ids.threads[job.threadId]!, observationId: imported.ids.observations[job.observationId]! });
      expect(copy).toEqual(rekeyed(receipts[i], imported));
    }
    const copied = (await service.memories.list({ caller, agentId: imported.agentId, query: { include_history: true } as never })).memories;
    expect(copied).toEqual(rekeyed(memories, imported));
  });

  it('a file written before job_learning lines existed still imports (its receipts then lack them)', async () => {
    const { service, agentId, jobs } = await learnedAgent();
    const lines = (await exported(service, agentId)).trimEnd().split('\n').filter((line) => !line.includes('"type":"job_learning"'));
    const end = JSON.parse(lines.at(-1)!) as { counts: Record<string, number> };
    delete end.counts.job_learning;
    const older = [...lines.slice(0, -1), JSON.stringify(end)].join('\n');
    const target = await service.admin.createOrganization({ name: 'Older' });
    const caller = await service.as(target.organizationId);
    const imported = await service.admin.importAgent({ organizationId: target.organizationId, open: () => splitLines([older]) });
    const { threadId, observationId } = jobs[1]!;
    const receipt = await service.observationReceipt({ caller, agentId: imported.agentId, threadId: imported.ids.threads[threadId]!, observationId: imported.ids.observations[observationId]! });
    expect(receipt.turns[0]).toMatchObject({ outcome: 'learned', memory_ids: [] });
    expect(receipt.model_tokens).toEqual([]);
  });

  it('refuses a job_learning line of an undeclared job or of the wrong shape, naming its line', async () => {
    const { service, agentId } = await learnedAgent();
    const lines = (await exported(service, agentId)).trimEnd().split('\n');
    const at = lines.findIndex((line) => line.includes('"type":"job_learning"'));
    const line = JSON.parse(lines[at]!) as Record<string, unknown>;
    const target = await service.admin.createOrganization({ name: 'Bad' });
    for (const [name, bad, message] of [
      ['undeclared job', { ...line, jobId: 'obs_elsewhere' }, `line ${at + 1}: names job "obs_elsewhere", which the file did not declare before.`],
      ['wrong shape', { ...line, merges: [{ turnIndex: -1, memoryId: 'mem_x' }] }, `line ${at + 1}: a job_learning line needs merges`],
    ] as const) {
      const text = lines.map((l, i) => (i === at ? JSON.stringify(bad) : l)).join('\n');
      const error = await service.admin.importAgent({ organizationId: target.organizationId, open: () => splitLines([text]) }).catch((e: unknown) => e);
      expect(isServiceError(error) && error.status, name).toBe(422);
      expect((error as Error).message, name).toContain(message);
    }
  });
});
