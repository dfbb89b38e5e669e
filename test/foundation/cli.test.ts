import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresUrl } from '@memory-agents/core/testing';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess } from '../support/server.js';

const databaseUrl = postgresUrl('the CLI on PostgreSQL');

describe('memory-agents CLI', () => {
  it('prints the first key once, keeps state across a graceful restart, and refuses a second server on the data dir', async () => {
    const first = await startServerProcess();
    try {
      expect(first.key).toMatch(/^sp_k[0-9a-f]{20}_[0-9a-f]{64}$/);
      const api = client(first.url, first.key);
      const agent = await readyAgent(api);
      const thread = await api.post(`/v1/agents/${agent.agent_id}/threads`, { title: 'kept' });

      const second = await runCli(['serve', '--port', '0', '--data', first.dataDir]);
      expect(second.code).toBe(1);
      expect(second.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^memory-agents: a server \(pid \d+\) already runs on .*\(data_dir_locked\)$/)]);

      expect(await first.stop('SIGTERM')).toBe(0);
      expect(first.output()).toContain('shutting down');

      const restarted = await startServerProcess({ dataDir: first.dataDir });
      try {
        expect(restarted.key).toBeNull();
        const again = client(restarted.url, first.key);
        expect((await again.get(`/v1/agents/${agent.agent_id}/threads/${thread.body.thread_id}`)).body.title).toBe('kept');
      } finally {
        expect(await restarted.stop('SIGINT')).toBe(0);
      }
    } finally {
      await first.stop();
      await removeDataDir(first.dataDir);
    }
  });

  it('runs admin commands in process when no server runs, with --json and plain output', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ma-cli-'));
    try {
      const org = await runCli(['orgs', 'create', '--name', 'Acme', '--data', dataDir, '--json']);
      expect(org.code).toBe(0);
      const parsed = JSON.parse(org.stdout);
      expect(parsed).toEqual({ organization_id: expect.stringMatching(/^org_/), name: 'Acme', balance: null });
      const key = await runCli(['keys', 'create', '--org', parsed.organization_id, '--data', dataDir]);
      expect(key.stdout).toMatch(/^key=sp_k[0-9a-f]{20}_[0-9a-f]{64}\s+key_id=k[0-9a-f]{20}\s+organization_id=org_\S+\s+expires_at=\S+/);
      const list = JSON.parse((await runCli(['keys', 'list', '--org', parsed.organization_id, '--data', dataDir, '--json'])).stdout);
      expect(list).toHaveLength(1);
      const created = Date.parse(list[0].created_at);
      expect(Date.parse(list[0].expires_at) - created).toBe(365 * 24 * 3600 * 1000);
      expect(list[0]).toMatchObject({ status: 'live', expiring_soon: false });
      const unknownOrg = await runCli(['keys', 'create', '--org', 'org_missing', '--data', dataDir]);
      expect(unknownOrg.code).toBe(1);
      expect(unknownOrg.stderr).toContain('not_found');
    } finally {
      await removeDataDir(dataDir);
    }
  });

  it('exits 2 with a short usage error on bad arguments, naming where to read more', async () => {
    for (const args of [['frobnicate'], ['orgs', 'create'], ['keys', 'create', '--bogus'], ['serve', '--port', '70000'], ['serve', '--port', '12ab'], ['credits', 'add', '--org', 'org_x', '--amount', 'abc'], ['orgs', 'create', '--name', 'A', '--credits', '-1'], ['keys']]) {
      const run = await runCli(args);
      expect(run.code, args.join(' ')).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines, args.join(' ')).toHaveLength(2);
      expect(lines[0]).toMatch(/^memory-agents: /);
      expect(lines[1]).toMatch(/^Run "memory-agents help( [a-z ]+)?" for usage\.$/);
    }
    expect((await runCli(['credits', 'add', '--org', 'org_x', '--amount', 'abc'])).stderr).toContain('--amount must be a decimal number');
    expect((await runCli(['keys'])).stderr).toContain('keys needs one of: create, list, revoke');
    const json = await runCli(['credits', 'add', '--org', 'org_x', '--amount', 'abc', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toEqual({ error: expect.stringContaining('--amount'), code: 'usage' });
    const bare = await runCli([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('memory-agents serve');
  });

  it('answers --version, help, help COMMAND and COMMAND --help', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../packages/server/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(await runCli(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n` });
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('memory-agents serve');
    expect(help.stdout).toContain('memory-agents keys revoke');
    expect((await runCli(['help'])).stdout).toBe(help.stdout);
    const serveHelp = await runCli(['help', 'serve']);
    expect(serveHelp.code).toBe(0);
    expect(serveHelp.stdout).toMatch(/^Usage: memory-agents serve /);
    expect(serveHelp.stdout).toContain('--model-url');
    expect((await runCli(['serve', '--help'])).stdout).toBe(serveHelp.stdout);
    const keys = await runCli(['help', 'keys']);
    expect(keys.stdout.match(/^Usage: /gm)).toHaveLength(3);
    const create = await runCli(['keys', 'create', '--help']);
    expect(create.stdout).toMatch(/^Usage: memory-agents keys create --org ORG_ID/);
    expect(create.stdout.match(/^Usage: /gm)).toHaveLength(1);
    const unknown = await runCli(['help', 'frobnicate']);
    expect(unknown.code).toBe(2);
  });

  it('exits 1 with one line when the port is in use, leaving the data dir free, and says when it creates a data dir', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as AddressInfo).port;
    const dataDir = await mkdtemp(join(tmpdir(), 'ma-cli-port-'));
    try {
      const refused = await runCli(['serve', '--port', String(port), '--data', dataDir]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toBe(`memory-agents: port ${port} on 127.0.0.1 is already in use; stop the program holding it or pass --port (address_in_use)`);
      expect(existsSync(join(dataDir, 'server.pid'))).toBe(false);
      // Refused before any state was opened: the first key is still to be made and shown.
      const started = await startServerProcess({ dataDir });
      try {
        expect(started.output()).toContain(`Creating a new data dir in ${dataDir}`);
        expect(started.key).toMatch(/^sp_k/);
        expect((await client(started.url, started.key).get('/v1/session')).status).toBe(200);
      } finally {
        await started.stop();
      }
      const again = await startServerProcess({ dataDir });
      try {
        expect(again.output()).not.toContain('Creating a new data dir');
        expect(again.key).toBeNull();
      } finally {
        await again.stop();
      }
    } finally {
      blocker.close();
      await removeDataDir(dataDir);
    }
  });

  it.runIf(databaseUrl)('serves on PostgreSQL with --database-url', async () => {
    const pg = (await import('pg')).default;
    const schema = `ma_cli_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    // pgvector in public before anything else creates it: created by the first connection below
    // (search_path = the test's schema first), it would land in that schema, and dropping the
    // schema at the end would drop it, with the vector column of the index's tables in public.
    await admin.query('CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public').catch(() => undefined);
    const url = new URL(databaseUrl!);
    // pgvector lives in public, where the memory index keeps its tables: a search_path without it is refused.
    url.searchParams.set('options', `-c search_path=${schema},public`);
    const server = await startServerProcess({ args: ['--database-url', url.toString()] });
    try {
      expect(server.key).toMatch(/^sp_/);
      const api = client(server.url, server.key);
      const agent = await readyAgent(api);
      const org = JSON.parse((await runCli(['orgs', 'list', '--database-url', url.toString(), '--json'])).stdout);
      expect(org).toHaveLength(1);
      expect((await api.get(`/v1/agents/${agent.agent_id}`)).status).toBe(200);
    } finally {
      await server.stop();
      await removeDataDir(server.dataDir);
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });

  it.runIf(databaseUrl)('leaves learning to the servers: an admin command on the database takes no unfinished job', async () => {
    const pg = (await import('pg')).default;
    const { createMemoryService, silentLogger } = await import('@memory-agents/core');
    const { openSqlClient, postgresMemoryIndex, postgresStore } = await import('@memory-agents/adapter-postgres');
    const schema = `ma_cli_jobs_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    // pgvector in public before anything else creates it: created by the first connection below
    // (search_path = the test's schema first), it would land in that schema, and dropping the
    // schema at the end would drop it, with the vector column of the index's tables in public.
    await admin.query('CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public').catch(() => undefined);
    const url = new URL(databaseUrl!);
    // pgvector's types live in public, where the memory index keeps its tables.
    url.searchParams.set('options', `-c search_path=${schema},public`);
    const sql = await openSqlClient({ connectionString: url.toString() });
    // A job queued while no process runs the workers (every server down): it waits in the database.
    const queuing = createMemoryService({ store: postgresStore({ client: sql }), index: postgresMemoryIndex({ client: sql }), logger: silentLogger, backgroundWork: false });
    let agentId: string | undefined;
    try {
      await queuing.start();
      const acme = await queuing.admin.createOrganization({ name: 'Acme', credits: '1000' });
      const org = await queuing.as(acme.organizationId);
      const agent = await queuing.agents.create({ caller: org, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
      agentId = agent.agent_id;
      await queuing.idle();
      const thread = await queuing.threads.create({ caller: org, agentId: agent.agent_id, body: { title: 'waiting' } });
      const observed = await queuing.observe({
        caller: org,
        agentId: agent.agent_id,
        threadId: thread.thread_id,
        body: {
          observations: Array.from({ length: 20 }, (_, t) => ({ content: [{ type: 'text', text: `Ledger line ${t}: the harbour crane was inspected.` }] })),
        },
      });
      const status = () => queuing.observationStatus({ caller: org, agentId: agent.agent_id, threadId: thread.thread_id, observationId: observed.observation_id });
      expect(await status()).toMatchObject({ status: 'queued' });

      // Admin commands through the CLI on the same database, one after another: none learns the
      // job (and so none abandons it half done on exit for a server to resume).
      for (const args of [['orgs', 'list'], ['keys', 'list', '--org', acme.organizationId], ['billing', 'show', '--org', acme.organizationId]]) {
        const ran = await runCli([...args, '--database-url', url.toString(), '--json']);
        expect(ran.code, ran.stderr).toBe(0);
        expect(await status()).toMatchObject({ status: 'queued', resumed_at: null });
      }
      const { rows: leases } = await admin.query(`SELECT name FROM ${schema}.leases`);
      expect(leases).toEqual([]);

      // A server on the database learns it, as a fresh job.
      const server = await startServerProcess({ args: ['--database-url', url.toString()] });
      try {
        const until = Date.now() + 60_000;
        while (!['committed', 'failed'].includes((await status()).status) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
        const final = await status();
        expect(final, JSON.stringify(final) + server.output()).toMatchObject({ status: 'committed', resumed_at: null });
      } finally {
        await server.stop();
        await removeDataDir(server.dataDir);
      }
    } finally {
      await queuing.stop();
      await sql.close();
      // The memory index keeps its tables in `public` unless given a `schema` (the server gives none).
      for (const table of ['memory_index_postings', 'memory_index_records', 'memory_index_terms', 'memory_index_agents']) {
        await admin.query(`DELETE FROM public.${table} WHERE agent_id = $1`, [agentId]).catch(() => undefined);
      }
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
