import { describe, expect, it } from 'vitest';
import { postgresUrl } from '@memory-agents/core/testing';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess } from '../support/server.js';
import { as, rateHeaders } from './billing-support.js';

const databaseUrl = postgresUrl('two server processes on one PostgreSQL (billing)');

/**
 * Two built server processes on one PostgreSQL database: a subject's request window, and the
 * organization's balance, are one across both (spec "Limits": limits hold however many processes
 * serve the API).
 */
describe.runIf(databaseUrl)('two server processes on one PostgreSQL', () => {
  it('share the request window of a subject and the credit balance', async () => {
    const pg = (await import('pg')).default;
    const schema = `ma_two_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(databaseUrl!);
    // pgvector lives in public, where the memory index keeps its tables: a search_path without it is refused.
    url.searchParams.set('options', `-c search_path=${schema},public`);
    const first = await startServerProcess({ args: ['--database-url', url.toString()] });
    const second = await startServerProcess({ args: ['--database-url', url.toString()] });
    try {
      const [a, b] = [client(first.url, first.key), client(second.url, first.key)];
      const agent = await readyAgent(a);
      const path = `/v1/agents/${agent.agent_id}/threads`;
      // Five thread creations per 10 s per subject, alternating between the processes.
      for (let i = 1; i <= 5; i++) {
        const response = await (i % 2 === 0 ? b : a).post(path, {}, as('gina'));
        expect(response.status).toBe(201);
        expect(rateHeaders(response).limit).toBe(5);
      }
      const refused = await b.post(path, {}, as('gina'));
      // Counted, not timed: only a window that slid (10 s passed) could let it through.
      if (refused.status !== 201) {
        expect(refused.status).toBe(429);
        expect(refused.body).toMatchObject({ code: 'rate_limit_exceeded', details: 'user' });
      }
      expect((await a.post(path, {}, as('hank'))).status).toBe(201);

      const org = (await a.get('/v1/session')).body.organization_id;
      const added = await runCli(['credits', 'add', '--org', org, '--amount', '7', '--database-url', url.toString(), '--json']);
      expect(added.code).toBe(0);
      expect((await b.get('/v1/billing')).body).toMatchObject({ balance: '7', entries: [{ route: 'credits_add', cost: '-7' }] });
    } finally {
      await first.stop();
      await second.stop();
      await removeDataDir(first.dataDir);
      await removeDataDir(second.dataDir);
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
