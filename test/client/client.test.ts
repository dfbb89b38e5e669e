import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, MemoryAgentsError, type ChatStreamEvent, type MemoryAgentsClient } from '@memory-agents/client';
import { fileFromPath } from '@memory-agents/client/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';

// The typed client against the built CLI over real HTTP: the tour of the README, step by step.
let server: ServerProcess;
let client: MemoryAgentsClient;
let agentId: string;
let threadId: string;
let scratch: string;

beforeAll(async () => {
  server = await startServerProcess();
  client = createClient({ baseUrl: server.url, apiKey: server.key! });
  scratch = await mkdtemp(join(tmpdir(), 'ma-client-'));
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
  await rm(scratch, { recursive: true, force: true });
});

describe('@memory-agents/client against the server', () => {
  it('creates an agent and waits until it is ready', async () => {
    const created = await client.agents.create({ agent_config: { role: 'assistant', objective: 'remember what users say' } });
    expect(created.status).toBe('initializing');
    const agent = await client.agents.waitUntilReady({ agentId: created.agent_id, timeoutMs: 60_000 });
    expect(agent).toMatchObject({ agent_id: created.agent_id, status: 'ready' });
    agentId = agent.agent_id;
  });

  it('creates a thread, observes with an idempotency key and waits for the observation', async () => {
    const thread = await client.threads.create({ agentId, title: 'Client tour' });
    expect(thread.thread_id).toMatch(/^thread_/);
    threadId = thread.thread_id;
    const accepted = await client.threads.observe({ agentId, threadId, observations: [{ content: [{ type: 'text', text: 'My sister Ingrid lives in Tromsø and works as a marine biologist.' }], timestamp: '2024-05-08T09:00:00Z' }], idempotencyKey: 'client-tour-observe-1' });
    expect(accepted).toMatchObject({ agent_id: agentId, thread_id: threadId, accepted: true });
    const status = await client.waitForObservation({ agentId, threadId, observationId: accepted.observation_id, timeoutMs: 60_000 });
    expect(status).toMatchObject({ observation_id: accepted.observation_id, status: 'committed' });
    expect(status.turns_processed).toBe(status.turns_total);
  });

  it('chats from memory with citations', async () => {
    const answer = await client.threads.chat({ agentId, threadId, turn_id: 'c1', message: 'Where does Ingrid live?' });
    expect(answer.message).toContain('Tromsø');
    expect(answer.citations.length).toBeGreaterThan(0);
  });

  it('streams a chat as context, deltas and done, in order', async () => {
    const events: ChatStreamEvent[] = [];
    for await (const event of client.threads.chatStream({ agentId, threadId, turn_id: 'c2', message: 'What does Ingrid work as?' })) events.push(event);
    const names = events.map((event) => event.event);
    expect(names[0]).toBe('context');
    expect(names.at(-1)).toBe('done');
    expect(names.slice(1, -1).every((name) => name === 'delta')).toBe(true);
    expect(names.length).toBeGreaterThan(2);
    const done = events.at(-1)!;
    if (done.event !== 'done') throw new Error('no done event');
    const text = events.flatMap((event) => (event.event === 'delta' ? [event.data.text] : [])).join('');
    expect(text).toBe(done.data.message);
    expect(done.data.message).toContain('marine biologist');
  });

  it('uploads a markdown file from a Blob and from a path, and reads the stored original back', async () => {
    const fromBlob = await client.threads.observeFile({ agentId, threadId, file: new Blob(['# Boat\n\nThe research boat of the institute is called Polarlys and is moored in Tromsø harbour.\n'], { type: 'text/markdown' }), filename: 'boat.md', idempotencyKey: 'client-tour-upload-1' });
    expect(fromBlob).toMatchObject({ accepted: true, filename: 'boat.md', doc_format: 'markdown' });
    expect(await client.waitForObservation({ agentId, threadId, observationId: fromBlob.observation_id, timeoutMs: 60_000 })).toMatchObject({ status: 'committed' });

    // observe-file allows 1 upload per 10 s per subject: the second upload is made for another person.
    const uploader = createClient({ baseUrl: server.url, apiKey: server.key!, endUser: 'uploader-2' });
    const ownThread = await uploader.threads.create({ agentId });
    const path = join(scratch, 'garden.md');
    await writeFile(path, '# Garden\n\nThe community garden grows rhubarb, kale and potatoes every summer.\n');
    const fromPath = await uploader.threads.observeFile({ agentId, threadId: ownThread.thread_id, file: await fileFromPath(path) });
    expect(fromPath).toMatchObject({ accepted: true, filename: 'garden.md' });
    expect(await uploader.waitForObservation({ agentId, threadId: ownThread.thread_id, observationId: fromPath.observation_id, timeoutMs: 60_000 })).toMatchObject({ status: 'committed' });

    const original = await client.sources.get({ agentId, sourceId: fromPath.source_id });
    expect(original.filename).toBe('garden.md');
    expect(await original.blob.text()).toContain('rhubarb, kale and potatoes');
    const answer = await client.threads.chat({ agentId, threadId, turn_id: 'c3', message: 'What is the research boat called?' });
    expect(answer.message).toContain('Polarlys');
  });

  it('throws MemoryAgentsError with status, code and request id on a 404', async () => {
    const error = await client.agents.get({ agentId: 'agent_00000000000000000000000000' }).catch((caught: unknown) => caught);
    expect(MemoryAgentsError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(MemoryAgentsError);
    expect(error).toMatchObject({ status: 404, code: 'agent_not_found', requestId: expect.stringMatching(/^req_/) });
    expect((error as MemoryAgentsError).message).toContain('agent_00000000000000000000000000');
  });

  it('throws MemoryAgentsError on a 401 for a wrong key', async () => {
    const stranger = createClient({ baseUrl: server.url, apiKey: 'sp_nobody_wrongsecret' });
    await expect(stranger.session.get()).rejects.toMatchObject({ name: 'MemoryAgentsError', status: 401, code: 'unauthorized', requestId: expect.stringMatching(/^req_/) });
  });
});
