import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryService, inMemoryStore, silentLogger, type Store } from '@memory-agents/core';
import { postgresUrl } from '@memory-agents/core/testing';
import { composeService, type StateLocation } from '@memory-agents/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, runCli } from '../support/server.js';

/**
 * Issue 41: `memory-agents import` killed with SIGKILL part-way must not leave a partial agent. A real
 * CLI process imports a file of MEMORIES memories and is killed once it reports its first 1,000;
 * what it wrote is hidden at once (status `importing`: not listed, 404), and the next start of the
 * service removes it. Embedded default (PGlite + LanceDB data dir) and PostgreSQL.
 */
const MEMORIES = 6000;
/** Generous: a CLI import and up to three service starts on a busy machine (not a timing assertion). */
const TIMEOUT_MS = 300_000;
const databaseUrl = postgresUrl('a killed memory-agents import on PostgreSQL');

let dir = '';
let file = '';

/** An export of an agent with MEMORIES memories (no vectors: the import embeds them, offline). */
async function bigExport(): Promise<string> {
  const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
  await service.start();
  const { organizationId } = await service.admin.createOrganization({ name: 'Source' });
  const caller = await service.as(organizationId);
  const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
  await service.idle();
  const thread = await service.threads.create({ caller, agentId: agent.agent_id, body: {} });
  await service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'The parcel for room 1 arrived on floor 3.' }] }] } });
  await service.idle();
  const lines: string[] = [];
  for await (const line of service.admin.exportAgent({ agentId: agent.agent_id, vectors: false })) lines.push(line.trimEnd());
  await service.stop();
  // The learned memory, copied MEMORIES times with its own text and piece number.
  const memoryAt = lines.findIndex((l) => l.includes('"type":"memory"'));
  const template = JSON.parse(lines[memoryAt]!) as { memory: { id: string; text: string } };
  const learned = /^(mem_.+_\d+_)(\d+)$/.exec(template.memory.id)!;
  const memories = Array.from({ length: MEMORIES }, (_, i) =>
    JSON.stringify({ ...template, memory: { ...template.memory, id: `${learned[1]}${i}`, text: `The parcel for room ${i} arrived on floor ${i % 7} of block ${i % 13}.` } }),
  );
  const trailer = JSON.parse(lines.at(-1)!) as { type: 'end'; counts: Record<string, number> };
  trailer.counts.memory = MEMORIES;
  return [...lines.slice(0, memoryAt), ...memories, ...lines.slice(memoryAt + 1, -1), JSON.stringify(trailer)].join('\n') + '\n';
}

/**
 * Runs `memory-agents import` and kills it (SIGKILL) when it reports its first progress line;
 * resolves the agent id it was writing and the line.
 */
async function killMidImport(organizationId: string, state: string[], cwd: string): Promise<{ agentId: string; said: string }> {
  const child = spawn(process.execPath, [CLI, 'import', '--org', organizationId, '--file', file, ...state], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const said = await new Promise<string>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const line = /memory-agents: import: agent (agent_\S+): (\d+) of (\d+) memories written/.exec(stderr);
      if (line) resolve(line[0]);
    });
    void exited.then(({ code }) => reject(new Error(`the import ended (${code}) before it reported progress:\n${stderr}\n${stdout}`)));
  });
  child.kill('SIGKILL');
  expect(await exited).toEqual({ code: null, signal: 'SIGKILL' });
  expect(stdout).toBe('');
  return { agentId: /agent_\S+(?=:)/.exec(said)![0], said };
}

/** What the store and index hold of the agent, read through a service started without background work (nothing resumed). */
async function leftOf(location: StateLocation, organizationId: string, agentId: string, backgroundWork: boolean) {
  const composed = await composeService(location, silentLogger, {}, { backgroundWork });
  await composed.service.start();
  try {
    await composed.service.idle();
    const store: Store = composed.store;
    const caller = await composed.service.as(organizationId);
    return {
      status: (await store.agents.get({ organizationId, agentId }))?.status ?? null,
      memories: (await composed.index.stats({ agentId })).count,
      listed: (await composed.service.agents.list({ caller })).map((agent) => agent.agent_id),
      read: await composed.service.agents.get({ caller, agentId }).then(
        () => 'found',
        (error: { code?: string }) => error.code,
      ),
    };
  } finally {
    await composed.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ma-import-killed-'));
  file = join(dir, 'agent.jsonl');
  await writeFile(file, await bigExport());
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a memory-agents import killed part-way leaves no agent', () => {
  it('embedded data dir: hidden at once, removed by the next start', { timeout: TIMEOUT_MS }, async () => {
    const dataDir = join(dir, 'data');
    const created = await runCli(['orgs', 'create', '--name', 'Target', '--data', dataDir, '--json']);
    expect(created.code, created.stderr).toBe(0);
    const organizationId = (JSON.parse(created.stdout) as { organization_id: string }).organization_id;

    const { agentId, said } = await killMidImport(organizationId, ['--data', dataDir], dir);
    // Part of it was written, none of it is visible.
    const killed = await leftOf({ dataDir }, organizationId, agentId, false);
    expect(killed.status, said).toBe('importing');
    expect(killed.memories).toBeGreaterThanOrEqual(1000);
    expect(killed.memories).toBeLessThan(MEMORIES);
    expect(killed.listed).toEqual([]);
    expect(killed.read).toBe('agent_not_found');

    // A start (with its background work, as serve does) removes it: no agent row, no memories.
    expect(await leftOf({ dataDir }, organizationId, agentId, true)).toEqual({ status: null, memories: 0, listed: [], read: 'agent_not_found' });

    // The import run again completes: one agent, every memory.
    const again = await runCli(['import', '--org', organizationId, '--file', file, '--data', dataDir, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const imported = JSON.parse(again.stdout) as { agent_id: string; memories: number };
    expect(imported.memories).toBe(MEMORIES);
    const done = await leftOf({ dataDir }, organizationId, imported.agent_id, false);
    expect(done).toEqual({ status: 'ready', memories: MEMORIES, listed: [imported.agent_id], read: 'found' });
  });

  describe.skipIf(!databaseUrl)('PostgreSQL (DATABASE_URL)', () => {
    const database = `ma_impkill_${randomBytes(4).toString('hex')}`;
    const url = new URL(databaseUrl ?? 'postgres://unset/');
    url.pathname = `/${database}`;
    const target = url.toString();
    let admin: import('pg').Client;

    beforeAll(async () => {
      const pg = (await import('pg')).default;
      admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
    });
    afterAll(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    });

    it('hidden at once; a start removes it once the import lease has lapsed, not while it may still run', { timeout: TIMEOUT_MS }, async () => {
      const created = await runCli(['orgs', 'create', '--name', 'Target', '--database-url', target, '--json']);
      expect(created.code, created.stderr).toBe(0);
      const organizationId = (JSON.parse(created.stdout) as { organization_id: string }).organization_id;
      const location: StateLocation = { databaseUrl: target, dataDir: join(dir, 'pg-blobs') };

      const { agentId, said } = await killMidImport(organizationId, ['--database-url', target], dir);
      const killed = await leftOf(location, organizationId, agentId, false);
      expect(killed.status, said).toBe('importing');
      expect(killed.memories).toBeGreaterThanOrEqual(1000);
      expect(killed.memories).toBeLessThan(MEMORIES);
      expect(killed.listed).toEqual([]);
      expect(killed.read).toBe('agent_not_found');

      // Another process may share this database: while the import's lease runs, a start leaves the
      // agent alone (still hidden).
      const db = new (await import('pg')).default.Client({ connectionString: target });
      await db.connect();
      try {
        const lease = await db.query<{ holder: string }>('SELECT holder FROM leases WHERE name = $1', [`agent-import:${agentId}`]);
        expect(lease.rows).toHaveLength(1);
        expect(await leftOf(location, organizationId, agentId, true)).toMatchObject({ status: 'importing', listed: [], read: 'agent_not_found' });
        // The lease lapses (the killed process renews it no more): the next start removes the agent.
        await db.query('UPDATE leases SET expires_at = 0 WHERE name = $1', [`agent-import:${agentId}`]);
      } finally {
        await db.end();
      }
      expect(await leftOf(location, organizationId, agentId, true)).toEqual({ status: null, memories: 0, listed: [], read: 'agent_not_found' });
    });
  });
});
