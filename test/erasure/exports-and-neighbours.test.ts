import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@memory-agents/core';
import { postgresUrl } from '@memory-agents/core/testing';
import { startServer, type RunningServer } from '@memory-agents/server';
import { client, eventually, type Client } from '../support/client.js';

/**
 * Issue 41, from outside over HTTP on a real server: erasure reaches exports (an export made before
 * an erasure, a thread delete or a memory delete is gone: 404 with a sentence, its file out of the
 * blob store), and a deleted memory's words leave its neighbours' search keywords (a full-text
 * search for a word only it said finds nothing; the neighbours are still found by their own words).
 */

const marker = () => `qz${randomBytes(6).toString('hex').replace(/\d/g, (d) => 'ghijklmnop'[Number(d)]!)}xq`;

type World = { server: RunningServer; api: Client; dataDir: string; agentId: string };

async function open(databaseUrl?: string): Promise<World> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-erase-exports-'));
  const server = await startServer({ ...(databaseUrl ? { databaseUrl, dataDir } : { dataDir }), port: 0, logger: silentLogger });
  const org = await server.service.admin.createOrganization({ name: 'Erase exports' });
  const { key } = await server.service.admin.createKey({ organizationId: org.organizationId });
  const api = client(server.url, key);
  const agent = await api.post('/v1/agents', { agent_config: { role: 'assistant', objective: 'remember' } });
  expect(agent.status).toBe(202);
  await server.service.idle();
  return { server, api, dataDir, agentId: agent.body.agent_id };
}

async function observe(world: World, turns: [string, string][]): Promise<string> {
  const thread = await world.api.post(`/v1/agents/${world.agentId}/threads`, {});
  expect(thread.status).toBe(201);
  const observations = turns.map(([speaker, text]) => ({ speaker, content: [{ type: 'text', text }] }));
  const observed = await world.api.post(`/v1/agents/${world.agentId}/threads/${thread.body.thread_id}/observe`, { observations });
  expect(observed.status).toBe(202);
  await world.server.service.idle();
  return thread.body.thread_id;
}

/** Starts an export and waits until it is ready; resolves its id. */
async function exported(world: World): Promise<string> {
  const started = await world.api.post(`/v1/agents/${world.agentId}/exports`, {});
  expect(started.status, started.text).toBe(202);
  const path = `/v1/agents/${world.agentId}/exports/${started.body.export_id}`;
  await eventually(async () => (await world.api.get(path)).body.status === 'ready', 'export ready');
  return started.body.export_id;
}

async function filesHolding(directory: string, mark: string): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = await readFile(path).catch(() => null);
    if (bytes?.includes(Buffer.from(mark))) found.push(path);
  }
  return found;
}

/** The texts of the memories the full-text channel finds for `query` (the vector channel finds something for anything). */
async function fullTextHits(world: World, query: string): Promise<string[]> {
  const response = await world.api.post(`/v1/agents/${world.agentId}/memories/search`, { query, limit: 20 });
  expect(response.status, response.text).toBe(200);
  return response.body.hits.filter((hit: { signals: { full_text: number } }) => hit.signals.full_text > 0).map((hit: { memory: { text: string } }) => hit.memory.text);
}

function cases(name: string, databaseUrl?: string) {
  describe(name, () => {
    let world: World;
    beforeAll(async () => {
      world = await open(databaseUrl);
    }, 60_000);
    afterAll(async () => {
      await world?.server.close();
      if (world) await rm(world.dataDir, { recursive: true, force: true });
    });

    it('an export made before an erasure answers 404 and its file leaves the blob store; one made after holds nothing erased', { timeout: 120_000 }, async () => {
      const secret = marker();
      const threadId = await observe(world, [['ana', `The vault word is ${secret} tonight.`], ['bo', 'Noted, see you at the harbour.']]);
      const before = await exported(world);
      const download = await world.api.get(`/v1/agents/${world.agentId}/exports/${before}/download`);
      expect(download.status).toBe(200);
      expect(download.text).toContain(secret);
      expect((await filesHolding(join(world.dataDir, 'blobs'), secret)).length).toBeGreaterThan(0);

      const accepted = await world.api.post(`/v1/agents/${world.agentId}/memories/erase`, { thread_id: threadId });
      expect(accepted.status).toBe(202);
      await world.server.service.idle();
      expect((await world.api.get(`/v1/agents/${world.agentId}/erasures/${accepted.body.erasure_id}`)).body.status).toBe('completed');

      for (const path of [`/v1/agents/${world.agentId}/exports/${before}`, `/v1/agents/${world.agentId}/exports/${before}/download`]) {
        const gone = await world.api.get(path);
        expect(gone.status, path).toBe(404);
        expect(gone.body).toMatchObject({ code: 'not_found', error: expect.stringMatching(/erased or deleted.*start a new export/) });
        expect(gone.text).not.toContain(secret);
      }
      expect(await filesHolding(join(world.dataDir, 'blobs'), secret)).toEqual([]);
      const after = await exported(world);
      const fresh = await world.api.get(`/v1/agents/${world.agentId}/exports/${after}/download`);
      expect(fresh.status).toBe(200);
      expect(fresh.text).not.toContain(secret);
    });

    it('a deleted memory\'s words leave its neighbours\' keywords: a search for a word only it said finds nothing', { timeout: 120_000 }, async () => {
      const secret = marker();
      await observe(world, [
        ['ana', 'We should plan the trip to the coast.'],
        ['bo', 'Sounds good, I can drive the van.'],
        ['ana', `My locker combination is ${secret} seven.`],
        ['bo', 'I will bring sandwiches and lemonade.'],
        ['ana', 'Let us leave early on Saturday.'],
        ['bo', 'The forecast says sunshine all weekend.'],
      ]);
      const before = await exported(world);
      // The neighbours were learned with the turn's words beside their own.
      expect((await fullTextHits(world, secret)).length).toBeGreaterThan(1);
      const listed = await world.api.get(`/v1/agents/${world.agentId}/memories?text_contains=${secret}`);
      expect(listed.body.memories).toHaveLength(1);
      const deleted = await world.api.delete(`/v1/agents/${world.agentId}/memories/${listed.body.memories[0].memory_id}`);
      expect(deleted.status).toBe(204);

      expect(await fullTextHits(world, secret)).toEqual([]);
      for (const own of ['van', 'sandwiches', 'coast', 'Saturday', 'sunshine']) expect((await fullTextHits(world, own))[0], own).toContain(own);
      // The export made before the delete is gone with its file.
      expect((await world.api.get(`/v1/agents/${world.agentId}/exports/${before}/download`)).status).toBe(404);
      expect(await filesHolding(join(world.dataDir, 'blobs'), secret)).toEqual([]);
      if (!databaseUrl) expect(await filesHolding(join(world.dataDir, 'lancedb'), secret)).toEqual([]);
    });
  });
}

cases('erasure reaches exports and neighbours: embedded default (PGlite + LanceDB data dir)');

const databaseUrl = postgresUrl('erasure reaches exports and neighbours on PostgreSQL');
if (databaseUrl) cases('erasure reaches exports and neighbours: PostgreSQL (DATABASE_URL)', databaseUrl);
