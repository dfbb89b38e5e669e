import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Embedder, type MemoryService } from '@memory-agents/core';
import { randomBytes } from 'node:crypto';
import { postgresUrl } from '@memory-agents/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedOpenaiServer } from '../../models-openai/src/testing/scripted-openai-server.js';
import { main, type CliIo } from './cli-main.js';
import { composeService } from './compose.js';

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), stdoutAsync: async (text) => void (stdout += text), env };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

/**
 * A stand-in for a sentence model (an external model, scripted): words of one concept point the
 * same way, so "Where does Alice reside?" finds "I moved to Berlin" with no word in common. Its
 * calls can be held at a gate, to look at the service mid-way through a re-embed.
 */
function conceptEmbedder() {
  const concepts: Record<string, number> = { berlin: 0, moved: 0, reside: 0, live: 0, home: 0, cello: 1, music: 1, plays: 1, invoices: 2, billing: 2 };
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  const embedder: Embedder & { hold(): void; release(): void; calls: number } = {
    specificationVersion: 'v1',
    id: 'concept-embedder-test:8',
    dimensions: 8,
    calls: 0,
    async embed({ texts, signal }) {
      embedder.calls += 1;
      // Held: like a model call in flight, it ends when the caller aborts it (the service stopping).
      if (gate) {
        await Promise.race([
          gate,
          new Promise((_, reject) => {
            if (signal?.aborted) reject(new Error('aborted'));
            signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          }),
        ]);
      }
      return {
        vectors: texts.map((text) => {
          const vector = new Float32Array(8);
          for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
            const axis = concepts[word];
            if (axis !== undefined) vector[axis]! += 1;
          }
          vector[7] = 0.05; // never a zero vector
          const norm = Math.hypot(...vector);
          return vector.map((value) => value / norm);
        }),
      };
    },
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release() {
      gate = null;
      open();
    },
  };
  return embedder;
}

async function until<T>(check: () => Promise<T | null | undefined | false>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('switching embedders on a data dir (PGlite + LanceDB, the embedded default)', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ma-reembed-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('learns with the hashed embedder, re-embeds under a new one in the background, then ranks by it', async () => {
    // 1. The offline default (hashed n-grams, 384 dimensions) learns three memories, one superseded later.
    const first = await composeService({ dataDir: dir }, silentLogger);
    await first.service.start();
    const org = await first.service.admin.createOrganization({ name: 'Acme' });
    let caller = await first.service.as(org.organizationId);
    const agent = await first.service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await first.service.idle();
    const thread = await first.service.threads.create({ caller, agentId: agent.agent_id });
    const say = async (service: MemoryService, text: string) => {
      const accepted = await service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ speaker: 'alice', content: [{ type: 'text', text }] }] } });
      return accepted.observation_id;
    };
    // One job (an agent learns one job at a time).
    await first.service.observe({
      caller,
      agentId: agent.agent_id,
      threadId: thread.thread_id,
      body: {
        observations: ['Big news: I moved to Berlin in March.', 'My brother Bob plays the cello in Porto.', 'Invoices go to billing@acme.test.'].map((text) => ({
          speaker: 'alice',
          content: [{ type: 'text' as const, text }],
        })),
      },
    });
    await first.service.idle();
    expect(await first.service.reembedding.status()).toBeNull();
    await first.close();

    // 2. The same data dir under another embedder (8 dimensions): the re-embed starts with the
    // service and is held at its first batch.
    const concept = conceptEmbedder();
    concept.hold();
    const second = await composeService({ dataDir: dir }, silentLogger, { embedder: concept });
    await second.service.start();
    caller = await second.service.as(org.organizationId);
    const during = await until(() => second.service.reembedding.status());
    expect(during).toMatchObject({ from: { id: 'hashed-ngrams-v1:384', dimensions: 384 }, to: { id: 'concept-embedder-test:8', dimensions: 8 }, done: 0, running: true });
    expect(during.total).toBeGreaterThanOrEqual(3);
    expect((await second.service.ready()).reembedding).toMatchObject({ done: 0, total: during.total });

    // Search works meanwhile, on full text: the cello memory by its words; the Berlin one has no
    // word in common with the question, so nothing ranks it.
    const cello = await second.service.retrieve({ caller, agentId: agent.agent_id, query: 'Who plays the cello?' });
    expect(cello.ranked[0]?.record.text).toContain('cello');
    const reside = await second.service.retrieve({ caller, agentId: agent.agent_id, query: 'Where does Alice reside?' });
    expect(reside.ranked.some((item) => item.record.text.includes('Berlin'))).toBe(false);

    // Learning waits (queued, not failed) while the index is re-embedded.
    const waiting = await say(second.service, 'I am at home with the music on.');
    const queued = await second.service.observationStatus({ caller, agentId: agent.agent_id, threadId: thread.thread_id, observationId: waiting });
    expect(queued.status).not.toBe('failed');
    expect(queued.status).not.toBe('committed');

    // 3. Released: every record is re-embedded and the index switches.
    concept.release();
    await until(async () => (await second.service.reembedding.status()) === null);
    expect(await second.index.embedder()).toEqual({ id: 'concept-embedder-test:8', dimensions: 8 });
    await until(async () => {
      const status = await second.service.observationStatus({ caller, agentId: agent.agent_id, threadId: thread.thread_id, observationId: waiting });
      return status.status === 'committed' || status.status === 'failed' ? status : null;
    }).then((status) => expect(status.status).toBe('committed'));
    const learning = await second.service.observationStatus({ caller, agentId: agent.agent_id, threadId: thread.thread_id, observationId: waiting });
    expect(JSON.stringify(learning)).not.toContain('embedder_mismatch');

    // The semantic channel ranks by the new embedder: the question finds Berlin with no shared word.
    const after = await second.service.retrieve({ caller, agentId: agent.agent_id, query: 'Where does Alice reside?' });
    expect(after.ranked[0]?.record.text).toContain('Berlin');
    await second.close();

    // 4. Reopened with the new embedder: nothing left to do, and it still ranks by it.
    const third = await composeService({ dataDir: dir }, silentLogger, { embedder: conceptEmbedder() });
    await third.service.start();
    expect(await third.service.reembedding.status()).toBeNull();
    caller = await third.service.as(org.organizationId);
    const again = await third.service.retrieve({ caller, agentId: agent.agent_id, query: 'Where does Alice reside?' });
    expect(again.ranked[0]?.record.text).toContain('Berlin');
    await third.close();
  });

  it('a switch back to the old embedder mid-way abandons the re-embed and keeps the old vectors', async () => {
    const data = await mkdtemp(join(tmpdir(), 'ma-reembed-back-'));
    try {
      const first = await composeService({ dataDir: data }, silentLogger);
      await first.service.start();
      const org = await first.service.admin.createOrganization({ name: 'Acme' });
      const caller = await first.service.as(org.organizationId);
      const agent = await first.service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
      await first.service.idle();
      const thread = await first.service.threads.create({ caller, agentId: agent.agent_id });
      await first.service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ speaker: 'alice', content: [{ type: 'text', text: 'Invoices go to billing@acme.test.' }] }] } });
      await first.service.idle();
      await first.close();

      const concept = conceptEmbedder();
      concept.hold();
      const second = await composeService({ dataDir: data }, silentLogger, { embedder: concept });
      await second.service.start();
      await until(() => second.service.reembedding.status());
      await second.close();
      concept.release();

      const third = await composeService({ dataDir: data }, silentLogger);
      await third.service.start();
      expect(await third.service.reembedding.status()).toBeNull();
      expect(await third.index.embedder()).toEqual({ id: 'hashed-ngrams-v1:384', dimensions: 384 });
      const found = await third.service.retrieve({ caller: await third.service.as(org.organizationId), agentId: agent.agent_id, query: 'Where do invoices go?' });
      expect(found.ranked[0]?.record.text).toContain('billing@acme.test');
      await third.close();
    } finally {
      await rm(data, { recursive: true, force: true });
    }
  });

  it('memory-agents reembed run re-embeds a stopped data dir in the foreground; reembed status reports it', async () => {
    const data = await mkdtemp(join(tmpdir(), 'ma-reembed-cli-'));
    const provider = await startScriptedOpenaiServer();
    try {
      const first = await composeService({ dataDir: data }, silentLogger);
      await first.service.start();
      const org = await first.service.admin.createOrganization({ name: 'Acme' });
      const caller = await first.service.as(org.organizationId);
      const agent = await first.service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
      await first.service.idle();
      const thread = await first.service.threads.create({ caller, agentId: agent.agent_id });
      await first.service.observe({
        caller,
        agentId: agent.agent_id,
        threadId: thread.thread_id,
        body: { observations: ['Ana keeps bees in Porto.', 'Invoices go to billing@acme.test.'].map((text) => ({ speaker: 'ana', content: [{ type: 'text' as const, text }] })) },
      });
      await first.service.idle();
      await first.close();

      expect(JSON.parse((await cli(['reembed', 'status', '--data', data, '--json'])).stdout)).toEqual({ reembedding: 'none' });
      const embedding = ['--embedding-url', provider.baseURL, '--embedding-model', 'scripted-embed', '--embedding-dimensions', '8'];
      const run = await cli(['reembed', 'run', '--data', data, ...embedding], { MEMORY_AGENTS_EMBEDDING_API_KEY: 'sk-test' });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^re-embedding: 0 of 2 memories \(hashed-ngrams-v1:384 -> .*scripted-embed.*\)$/m);
      expect(run.stdout).toMatch(/^re-embedded 2 memories; the index now uses .*scripted-embed/m);
      const again = await cli(['reembed', 'run', '--data', data, '--json', ...embedding], { MEMORY_AGENTS_EMBEDDING_API_KEY: 'sk-test' });
      expect(JSON.parse(again.stdout)).toMatchObject({ reembedded: 0, embedder: expect.stringContaining('scripted-embed') });
      // Without a server, status starts nothing: no re-embed runs until a server (or reembed run) starts one.
      expect(JSON.parse((await cli(['reembed', 'status', '--data', data, '--json'])).stdout)).toEqual({ reembedding: 'none' });
    } finally {
      await provider.close();
      await rm(data, { recursive: true, force: true });
    }
  });
});

const databaseUrl = postgresUrl('re-embedding on PostgreSQL shared by two services');

describe.skipIf(!databaseUrl)('switching embedders on PostgreSQL shared by two services (DATABASE_URL)', () => {
  const name = `ma_reembed_${randomBytes(4).toString('hex')}`;
  const url = new URL(databaseUrl ?? 'postgres://unset/');
  url.pathname = `/${name}`;
  let admin: import('pg').Client;
  let dir = '';
  beforeAll(async () => {
    const pg = (await import('pg')).default;
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    dir = await mkdtemp(join(tmpdir(), 'ma-reembed-pg-'));
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  });

  it('one of two services re-embeds (the lease), both switch, and both rank by the new embedder', async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const first = await composeService({ databaseUrl: url.toString() }, silentLogger);
      await first.service.start();
      const org = await first.service.admin.createOrganization({ name: 'Acme' });
      let caller = await first.service.as(org.organizationId);
      const agent = await first.service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
      await first.service.idle();
      const thread = await first.service.threads.create({ caller, agentId: agent.agent_id });
      await first.service.observe({
        caller,
        agentId: agent.agent_id,
        threadId: thread.thread_id,
        body: { observations: ['Big news: I moved to Berlin in March.', 'My brother Bob plays the cello in Porto.'].map((text) => ({ speaker: 'alice', content: [{ type: 'text' as const, text }] })) },
      });
      await first.service.idle();
      await first.close();

      const embedders = [conceptEmbedder(), conceptEmbedder()];
      const services = await Promise.all(embedders.map((embedder) => composeService({ databaseUrl: url.toString() }, silentLogger, { embedder })));
      try {
        await Promise.all(services.map((composed) => composed.service.start()));
        for (const composed of services) await until(async () => (await composed.service.reembedding.status()) === null);
        // One embedded the records (the other waited for the lease, or found the switch done).
        expect(embedders.filter((embedder) => embedder.calls > 0)).toHaveLength(1);
        for (const composed of services) {
          expect(await composed.index.embedder()).toEqual({ id: 'concept-embedder-test:8', dimensions: 8 });
          caller = await composed.service.as(org.organizationId);
          const found = await until(async () => {
            const result = await composed.service.retrieve({ caller, agentId: agent.agent_id, query: 'Where does Alice reside?' });
            return result.ranked[0]?.record.text.includes('Berlin') ? result : null;
          });
          expect(found.ranked[0]?.record.text).toContain('Berlin');
        }
      } finally {
        for (const composed of services) await composed.close();
      }
    } finally {
      process.chdir(cwd);
    }
  });
});

