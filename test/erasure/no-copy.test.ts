import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@memory-agents/core';
import { buildDocx, buildPdf, docxParagraph, postgresUrl } from '@memory-agents/core/testing';
import { startServer, type RunningServer } from '@memory-agents/server';
import { client, type Client } from '../support/client.js';
import { GENEROUS_UPLOAD_RATES } from '../documents/document-support.js';

/**
 * Erasure that leaves no copy (issue 30): a unique marker goes in through every door (observe,
 * observe-file with txt, docx and pdf, chat, observe-and-respond), is learned, then erased by
 * thread, by source, by end user, by thread delete and by agent delete. Afterwards no route answers
 * with it (thread, observation status, recall memory context, the idempotent replay of the same
 * key, the stored original citations link to), and no file of the LanceDB directory or the blob
 * store holds its bytes. On PostgreSQL (DATABASE_URL) no live row of any table holds it.
 */

const marker = () => `qz${randomBytes(6).toString('hex').replace(/\d/g, (d) => 'ghijklmnop'[Number(d)]!)}xq`;

type World = { server: RunningServer; api: Client; dataDir: string; agentId: string; key: string };

async function open(databaseUrl?: string): Promise<World> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-erase-'));
  const server = await startServer({ ...(databaseUrl ? { databaseUrl, dataDir } : { dataDir }), port: 0, logger: silentLogger });
  const org = await server.service.admin.createOrganization({ name: 'Erase', limits: { rateLimits: GENEROUS_UPLOAD_RATES } as never });
  const { key } = await server.service.admin.createKey({ organizationId: org.organizationId });
  const api = client(server.url, key);
  const agentId = await newAgent(api, server);
  return { server, api, dataDir, agentId, key };
}

async function newAgent(api: Client, server: RunningServer): Promise<string> {
  const agent = await api.post('/v1/agents', { agent_config: { role: 'assistant', objective: 'remember' } });
  expect(agent.status).toBe(202);
  await server.service.idle();
  return agent.body.agent_id;
}

async function newThread(world: World, agentId = world.agentId, endUser?: string): Promise<string> {
  const response = await world.api.post(`/v1/agents/${agentId}/threads`, {}, endUser ? { headers: { 'x-sp-end-user': endUser } } : {});
  expect(response.status).toBe(201);
  return response.body.thread_id;
}

async function upload(world: World, agentId: string, threadId: string, filename: string, data: Uint8Array, endUser?: string) {
  const form = new FormData();
  form.append('file', new Blob([data]), filename);
  const response = await fetch(`${world.server.url}/v1/agents/${agentId}/threads/${threadId}/observe-file`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.key}`, ...(endUser ? { 'x-sp-end-user': endUser } : {}) },
    body: form,
  });
  const body = (await response.json()) as { source_id: string; observation_id: string };
  expect(response.status, JSON.stringify(body)).toBe(202);
  await world.server.service.idle();
  return body;
}

/** Writes `mark` through every door into the thread; resolves what the reads check afterwards. */
async function writeEverywhere(world: World, agentId: string, threadId: string, mark: string, endUser?: string) {
  const headers: Record<string, string> = endUser ? { 'x-sp-end-user': endUser } : {};
  const base = `/v1/agents/${agentId}/threads/${threadId}`;
  const idempotencyKey = `key-${mark}`;
  const observeBody = { observations: [{ speaker: 'ana', content: [{ type: 'text', text: `The vault code word is ${mark} and it opens the north door.` }] }] };
  const observed = await world.api.post(`${base}/observe`, observeBody, { headers: { ...headers, 'idempotency-key': idempotencyKey } });
  expect(observed.status).toBe(202);
  await world.server.service.idle();
  const sources = [
    await upload(world, agentId, threadId, `${mark}.txt`, new TextEncoder().encode(`Notes: the ${mark} harbour opens at dawn.\n`), endUser),
    await upload(world, agentId, threadId, 'notes.docx', buildDocx(docxParagraph(`The ${mark} lighthouse keeper writes letters.`)), endUser),
    await upload(world, agentId, threadId, 'notes.pdf', buildPdf([{ text: [`The ${mark} ferry leaves at noon.`] }]), endUser),
  ];
  const chat = await world.api.post(`${base}/chat`, { turn_id: `t-${mark}`, message: `Tell me about ${mark} please.` }, { headers });
  expect(chat.status).toBe(200);
  const respondBody = { turn_id: `r-${mark}`, message: `Remember that ${mark} is my nickname.` };
  const respond = await world.api.post(`${base}/observe-and-respond`, respondBody, { headers: { ...headers, 'idempotency-key': `${idempotencyKey}-respond` } });
  expect(respond.status).toBe(200);
  await world.server.service.idle();
  const recalled = await world.api.post(`/v1/agents/${agentId}/recall`, { query: `${mark} vault harbour lighthouse` }, { headers });
  expect(recalled.body.memory_context).toContain(mark);
  return { base, observeBody, respondBody, idempotencyKey, observationId: observed.body.observation_id as string, sources, headers };
}

/** After erasure: no route answers with the marker. */
async function expectNoRouteHolds(world: World, agentId: string, mark: string, written: Awaited<ReturnType<typeof writeEverywhere>>, threadGone: boolean) {
  const { base, headers } = written;
  if (threadGone) {
    expect((await world.api.get(base, { headers })).status).toBe(404);
    expect((await world.api.get(`${base}/observe/${written.observationId}/status`, { headers })).status).toBe(404);
  }
  const recalled = await world.api.post(`/v1/agents/${agentId}/recall`, { query: `${mark} vault harbour lighthouse ferry nickname` }, { headers });
  expect([200, 404]).toContain(recalled.status);
  expect(recalled.text).not.toContain(mark);
  // A chat in a fresh thread about the same things: neither its memory context nor its answer holds it.
  const fresh = await newThread(world, agentId);
  const chat = await world.api.post(`/v1/agents/${agentId}/threads/${fresh}/chat`, { turn_id: `after-${fresh}`, message: 'What about the vault, the harbour, the lighthouse, the ferry and my nickname?' });
  expect(chat.status).toBe(200);
  expect(chat.text, chat.text).not.toContain(mark);
  // The same Idempotency-Key again: no stored replay holds the text.
  const replay = await world.api.post(`${base}/observe`, written.observeBody, { headers: { ...headers, 'idempotency-key': written.idempotencyKey } });
  expect(replay.text).not.toContain(mark);
  if (replay.status === 202) await world.server.service.idle();
  const answerReplay = await world.api.post(`${base}/observe-and-respond`, written.respondBody, { headers: { ...headers, 'idempotency-key': `${written.idempotencyKey}-respond` } });
  expect(answerReplay.status).toBe(404);
  expect(answerReplay.text).not.toContain(mark);
  for (const source of written.sources) {
    const original = await world.api.get(`/v1/agents/${agentId}/sources/${source.source_id}`, { headers });
    expect(original.status).toBe(404);
  }
}

/** Files under `directory` whose bytes hold any of `marks`. */
async function filesHolding(directory: string, marks: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  let entries;
  try {
    entries = await readdir(directory, { recursive: true, withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = await readFile(path).catch(() => null);
    if (bytes && marks.some((mark) => bytes.includes(Buffer.from(mark)))) found.push(path);
  }
  return found;
}

async function erase(world: World, agentId: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  const accepted = await world.api.post(`/v1/agents/${agentId}/memories/erase`, body, { headers });
  expect(accepted.status, accepted.text).toBe(202);
  await world.server.service.idle();
  const done = await world.api.get(`/v1/agents/${agentId}/erasures/${accepted.body.erasure_id}`, { headers });
  expect(done.body.status).toBe('completed');
  return done.body;
}

/** Runs every erasure door on one world; resolves the markers that must be gone. */
async function eraseThroughEveryDoor(world: World): Promise<{ erased: string[]; kept: string }> {
  const erased: string[] = [];
  const kept = marker();
  const keptThread = await newThread(world);
  await world.api.post(`/v1/agents/${world.agentId}/threads/${keptThread}/observe`, { observations: [{ speaker: 'bo', content: [{ type: 'text', text: `The ${kept} garden stays.` }] }] });
  await world.server.service.idle();

  // 1. By thread.
  const byThread = marker();
  erased.push(byThread);
  const t1 = await newThread(world);
  const w1 = await writeEverywhere(world, world.agentId, t1, byThread);
  const e1 = await erase(world, world.agentId, { thread_id: t1 });
  expect(e1.counts).toMatchObject({ threads: 1, originals: 3 });
  expect(e1.counts.replays).toBeGreaterThan(0);
  await expectNoRouteHolds(world, world.agentId, byThread, w1, true);

  // 2. By source: the txt upload of a thread; the rest of the thread stays.
  const bySource = marker();
  erased.push(bySource);
  const t2 = await newThread(world);
  const uploaded = await upload(world, world.agentId, t2, 'source.txt', new TextEncoder().encode(`Source only: ${bySource} sails at dusk.\n`));
  const e2 = await erase(world, world.agentId, { source_id: uploaded.source_id });
  expect(e2.counts).toMatchObject({ observations: 1, originals: 1 });
  expect((await world.api.get(`/v1/agents/${world.agentId}/sources/${uploaded.source_id}`)).status).toBe(404);
  expect((await world.api.post(`/v1/agents/${world.agentId}/recall`, { query: `${bySource} sails dusk` })).text).not.toContain(bySource);

  // 3. By end user.
  const byPerson = marker();
  erased.push(byPerson);
  const t3 = await newThread(world, world.agentId, 'eve@example.test');
  const w3 = await writeEverywhere(world, world.agentId, t3, byPerson, 'eve@example.test');
  const e3 = await erase(world, world.agentId, { end_user_id: 'eve@example.test' }, { 'x-sp-end-user': 'eve@example.test' });
  expect(e3.counts.threads).toBe(1);
  await expectNoRouteHolds(world, world.agentId, byPerson, w3, true);

  // 4. The spec's thread delete.
  const byDelete = marker();
  erased.push(byDelete);
  const t4 = await newThread(world);
  const w4 = await writeEverywhere(world, world.agentId, t4, byDelete);
  expect((await world.api.delete(`/v1/agents/${world.agentId}/threads/${t4}`)).status).toBe(202);
  await world.server.service.idle();
  await expectNoRouteHolds(world, world.agentId, byDelete, w4, true);

  // 5. The spec's agent delete.
  const byAgentDelete = marker();
  erased.push(byAgentDelete);
  const doomed = await newAgent(world.api, world.server);
  const t5 = await newThread(world, doomed);
  await writeEverywhere(world, doomed, t5, byAgentDelete);
  expect((await world.api.delete(`/v1/agents/${doomed}`)).status).toBe(202);
  await world.server.service.idle();
  expect((await world.api.get(`/v1/agents/${doomed}`)).status).toBe(404);

  // 6. A near-duplicate merged when learned (issue 33): the memory learned from the erased turn is
  // re-pointed to the kept duplicate, and the erased turn's own spelling is gone.
  const quiet = marker();
  const shouted = quiet.toUpperCase();
  erased.push(shouted);
  const t6 = await newThread(world);
  const t6kept = await newThread(world);
  const say = (text: string) => ({ observations: [{ speaker: 'cy', content: [{ type: 'text', text }] }] });
  expect((await world.api.post(`/v1/agents/${world.agentId}/threads/${t6}/observe`, say(`The ${shouted} cellar key hangs by the stove.`))).status).toBe(202);
  await world.server.service.idle();
  const duplicate = await world.api.post(`/v1/agents/${world.agentId}/threads/${t6kept}/observe`, say(`the ${quiet} cellar key hangs by the stove`));
  await world.server.service.idle();
  const receipt = await world.api.get(`/v1/agents/${world.agentId}/threads/${t6kept}/observe/${duplicate.body.observation_id}/receipt`);
  expect(receipt.body.turns[0].outcome).toBe('merged');
  await erase(world, world.agentId, { thread_id: t6 });
  const recalled = await world.api.post(`/v1/agents/${world.agentId}/recall`, { query: `${quiet} cellar key` });
  expect(recalled.body.memory_context).toContain(`the ${quiet} cellar key hangs by the stove`);
  expect(recalled.text).not.toContain(shouted);

  // What was not erased is still there.
  expect((await world.api.post(`/v1/agents/${world.agentId}/recall`, { query: `${kept} garden` })).body.memory_context).toContain(kept);
  return { erased, kept };
}

describe('erasure leaves no copy: embedded default (PGlite + LanceDB data dir)', () => {
  let world: World;
  beforeAll(async () => {
    world = await open();
  }, 60_000);
  afterAll(async () => {
    await world?.server.close();
    if (world) await rm(world.dataDir, { recursive: true, force: true });
  });

  it('no route and no LanceDB or blob file holds an erased marker (what PGlite\'s directory still holds is reported)', { timeout: 240_000 }, async () => {
    const { erased, kept } = await eraseThroughEveryDoor(world);
    expect(await filesHolding(join(world.dataDir, 'lancedb'), erased)).toEqual([]);
    expect(await filesHolding(join(world.dataDir, 'blobs'), erased)).toEqual([]);
    // The kept marker is found the same way, so the search would see an erased one.
    expect((await filesHolding(join(world.dataDir, 'lancedb'), [kept])).length).toBeGreaterThan(0);
    // PGlite: what its directory still holds after the plain VACUUM is reported (docs/deploying.md).
    const pgFiles = (await filesHolding(join(world.dataDir, 'pgdata'), erased)).map((path) => path.slice(world.dataDir.length));
    console.info(`[erasure] PGlite files still holding an erased marker after VACUUM: ${pgFiles.length === 0 ? 'none' : pgFiles.join(', ')}`);
  });
});

const databaseUrl = postgresUrl('erasure leaves no copy on PostgreSQL');

describe.runIf(databaseUrl)('erasure leaves no copy: PostgreSQL (DATABASE_URL)', () => {
  let world: World;
  beforeAll(async () => {
    world = await open(databaseUrl);
  }, 60_000);
  afterAll(async () => {
    await world?.server.close();
    if (world) await rm(world.dataDir, { recursive: true, force: true });
  });

  it('no route, no blob file and no live row of any table holds an erased marker', { timeout: 240_000 }, async () => {
    const { erased, kept } = await eraseThroughEveryDoor(world);
    expect(await filesHolding(join(world.dataDir, 'blobs'), erased)).toEqual([]);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const { rows: tables } = await db.query<{ name: string }>(
        `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
      );
      const holding = async (mark: string) => {
        const found: string[] = [];
        for (const { name } of tables) {
          // Other test files share the database and drop their schemas when done: a table gone
          // since the listing holds nothing (undefined_table, invalid_schema_name).
          const rows = await db.query(`SELECT 1 FROM ${name} t WHERE strpos(t::text, $1) > 0 LIMIT 1`, [mark]).then(
            (result) => result.rows,
            (error: { code?: string }) => {
              if (error.code === '42P01' || error.code === '3F000') return [];
              throw error;
            },
          );
          if (rows.length > 0) found.push(name);
        }
        return found;
      };
      for (const mark of erased) expect(await holding(mark), mark).toEqual([]);
      expect((await holding(kept)).length).toBeGreaterThan(0);
    } finally {
      await db.end();
    }
  });
});
