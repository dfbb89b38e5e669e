import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { documentPaths, postForm } from '../documents/document-support.js';
import { filler, newThread, pollResumed, pollStatus, said, threadPaths } from './learning-support.js';

/**
 * A server killed (SIGKILL) after it stored a keyed request but before its 202 left: the client
 * never got an answer and sends the same request with the same Idempotency-Key to the restarted
 * server. Nothing may be learned twice and nothing lost.
 * @see issue "Reliability hardening", item 6
 */
const PRELOAD = fileURLToPath(new URL('../support/crash-before-answer.mjs', import.meta.url));
const servers: ServerProcess[] = [];

afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL');
  for (const server of servers) await removeDataDir(server.dataDir);
});

/** A server that dies at the 202 of a keyed request to a path ending in `suffix`. */
async function crashingServer(suffix: string) {
  const server = await startServerProcess({ nodeArgs: ['--import', PRELOAD], env: { MA_CRASH_BEFORE_ANSWER: suffix } });
  servers.push(server);
  const api = client(server.url, server.key);
  const agentId = (await readyAgent(api)).agent_id as string;
  const threadId = await newThread(api, agentId);
  return { server, api, agentId, threadId };
}

/** Memories of the agent in the data dir's index: how many, and how many belong to job `observationId`. */
async function memoriesOf(dataDir: string, agentId: string, observationId: string, turns: number) {
  const index = lancedbMemoryIndex({ uri: join(dataDir, 'lancedb') });
  await index.init();
  try {
    const job = observationId.slice(4);
    const ids = Array.from({ length: turns }, (_, turn) => Array.from({ length: 40 }, (_, piece) => `mem_${job}_${turn}_${piece}`)).flat();
    const records = await index.get({ agentId, ids });
    const turnsWithMemories = new Set(records.map((record) => record.id.split('_')[2])).size;
    return { total: (await index.stats({ agentId })).count, ofJob: records.length, turnsWithMemories };
  } finally {
    await index.close();
  }
}

describe('a kill between the store write and the 202, then a resend with the same Idempotency-Key', () => {
  it('observe: the resend answers 202 for the stored job; every turn is learned once', { timeout: 120_000 }, async () => {
    const { server, api, agentId, threadId } = await crashingServer('/observe');
    const paths = threadPaths(agentId, threadId);
    const body = { observations: Array.from({ length: 5 }, (_, i) => said(`Crash note ${i + 1}: ${filler(400, i)}`)) };
    const headers = { 'idempotency-key': 'crash-observe-1' };
    await expect(api.post(paths.observe, body, { headers })).rejects.toThrow();
    expect(await server.stop()).toBeNull();

    const restarted = await startServerProcess({ dataDir: server.dataDir });
    servers.push(restarted);
    const again = client(restarted.url, server.key);
    const resent = await again.post(paths.observe, body, { headers });
    expect(resent.status).toBe(202);
    const observationId: string = resent.body.observation_id;
    const done = await pollStatus(again, paths.status(observationId));
    expect(done).toMatchObject({ status: 'committed', turns_total: 5, turns_processed: 5, learning: null });
    // Once more, after learning: the same answer; another body under the key is a conflict.
    expect((await again.post(paths.observe, body, { headers })).body).toEqual(resent.body);
    expect((await again.post(paths.observe, { observations: [said('something else')] }, { headers })).status).toBe(409);
    const logs = await again.get(`/v1/agents/${agentId}/logs`);
    expect(logs.body.entries.filter((entry: { route: string }) => entry.route === 'observe')).toHaveLength(1);
    await restarted.stop();

    const memories = await memoriesOf(server.dataDir, agentId, observationId, 5);
    expect(memories.turnsWithMemories).toBe(5);
    expect(memories.total).toBe(memories.ofJob);
  });

  it('observe-file: the resend answers 202 for the stored upload; the file is read and learned once', { timeout: 120_000 }, async () => {
    const { server, agentId, threadId } = await crashingServer('/observe-file');
    const paths = documentPaths(agentId, threadId);
    const text = Array.from({ length: 6 }, (_, i) => `Section ${i + 1}. ${filler(1500, i + 10)}`).join('\n\n');
    const file = { data: new TextEncoder().encode(text), filename: 'crash-notes.txt', type: 'text/plain' };
    const headers = { 'idempotency-key': 'crash-upload-1' };
    await expect(postForm(server.url, server.key!, paths.observeFile, file, {}, headers)).rejects.toThrow();
    expect(await server.stop()).toBeNull();

    const restarted = await startServerProcess({ dataDir: server.dataDir });
    servers.push(restarted);
    const again = client(restarted.url, server.key);
    const resent = await postForm(restarted.url, server.key!, paths.observeFile, file, {}, headers);
    expect(resent.status).toBe(202);
    const observationId: string = resent.body.observation_id;
    const done = await pollStatus(again, paths.status(observationId));
    expect(done).toMatchObject({ status: 'committed', learning: null });
    const turns: number = done.turns_total;
    expect(turns).toBeGreaterThan(1);
    const sources = await again.get(paths.sources);
    expect(sources.body.sources).toHaveLength(1);
    expect(sources.body.sources[0]).toMatchObject({ observation_id: observationId, document_state: 'completed' });
    await restarted.stop();

    const memories = await memoriesOf(server.dataDir, agentId, observationId, turns);
    expect(memories.turnsWithMemories).toBe(turns);
    expect(memories.total).toBe(memories.ofJob);
  });
});

describe('an upload killed (SIGKILL) while it is being learned', () => {
  it('resumes after the restart, is learned once, and its Idempotency-Key still replays the first 202', { timeout: 600_000 }, async () => {
    const first = await startServerProcess();
    servers.push(first);
    const api = client(first.url, first.key);
    const agentId = (await readyAgent(api)).agent_id as string;
    const threadId = await newThread(api, agentId);
    const paths = documentPaths(agentId, threadId);
    // Long enough that the kill lands while its turns are being learned.
    const text = Array.from({ length: 400 }, (_, i) => `Part ${i + 1}. ${filler(3_800, i)}`).join('\n\n');
    const file = { data: new TextEncoder().encode(text), filename: 'long-notes.txt', type: 'text/plain' };
    const headers = { 'idempotency-key': 'learning-upload-1' };
    const accepted = await postForm(first.url, first.key!, paths.observeFile, file, { max_chars: '4000', overlap_chars: '0' }, headers);
    expect(accepted.status).toBe(202);
    const observationId: string = accepted.body.observation_id;
    const midway = await pollStatus(api, paths.status(observationId), (status) => status.turns_processed >= 20 || !['processing', 'queued', 'converting'].includes(status.status), { tries: 5_000 });
    expect(midway.status).toBe('processing');
    expect(await first.stop('SIGKILL')).toBeNull();

    const second = await startServerProcess({ dataDir: first.dataDir });
    servers.push(second);
    const again = client(second.url, first.key);
    // The retry of the upload replays its 202 and starts nothing new.
    const resent = await postForm(second.url, first.key!, paths.observeFile, file, { max_chars: '4000', overlap_chars: '0' }, headers);
    expect(resent.status).toBe(202);
    expect(resent.body).toEqual(accepted.body);
    const done = await pollResumed(again, paths.status(observationId), [first, second]);
    expect(done).toMatchObject({ status: 'committed', learning: null });
    expect(done.resumed_at).not.toBeNull();
    const sources = await again.get(paths.sources);
    expect(sources.body.sources).toHaveLength(1);
    await second.stop();

    const memories = await memoriesOf(first.dataDir, agentId, observationId, done.turns_total);
    expect(memories.turnsWithMemories).toBe(done.turns_total);
    expect(memories.total).toBe(memories.ofJob);
  });
});
