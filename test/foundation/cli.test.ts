import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess } from '../support/server.js';

describe('memory-agents CLI', () => {
  it('prints the first key once, keeps state across a graceful restart, and refuses a second server on the data dir', async () => {
    const first = await startServerProcess();
    try {
      expect(first.key).toMatch(/^sp_k[0-9a-f]{20}_[0-9a-f]{64}$/);
      const api = client(first.url, first.key);
      const agent = await readyAgent(api);
      const thread = await api.post(`/v1/agents/${agent.agent_id}/threads`, { title: 'kept' });

      const second = await runCli(['serve', '--port', '0', '--data', first.dataDir]);
      expect(second.code).toBe(2);
      expect(second.stderr).toContain('already runs');

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

  it('exits 2 with usage on bad arguments', async () => {
    expect((await runCli(['frobnicate'])).code).toBe(2);
    expect((await runCli(['orgs', 'create'])).code).toBe(2);
    expect((await runCli(['keys', 'create', '--bogus'])).code).toBe(2);
    expect((await runCli(['serve', '--port', '70000'])).code).toBe(2);
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('memory-agents serve');
  });

  it.runIf(process.env.DATABASE_URL)('serves on PostgreSQL with --database-url', async () => {
    const pg = (await import('pg')).default;
    const schema = `ma_cli_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
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
});
