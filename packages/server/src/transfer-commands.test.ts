import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@memory-agents/core';
import { postgresUrl } from '@memory-agents/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain as run } from './cli-test-support.js';
import { composeService } from './compose.js';

const databaseUrl = postgresUrl('memory-agents export and import on PostgreSQL');


const DOCUMENT = '# Harbor\n\nThe harbor opens at dawn and closes at nine.\n';

describe.skipIf(!databaseUrl)('memory-agents export and import (PostgreSQL, DATABASE_URL)', () => {
  const databases = [`ma_exp_${randomBytes(4).toString('hex')}`, `ma_imp_${randomBytes(4).toString('hex')}`, `ma_bulk_${randomBytes(4).toString('hex')}`];
  const urls = databases.map((name) => {
    const url = new URL(databaseUrl ?? 'postgres://unset/');
    url.pathname = `/${name}`;
    return url.toString();
  });
  let dir = '';
  let admin: import('pg').Client;

  beforeAll(async () => {
    const pg = (await import('pg')).default;
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    for (const name of databases) await admin.query(`CREATE DATABASE ${name}`);
    dir = await mkdtemp(join(tmpdir(), 'ma-export-'));
  });
  afterAll(async () => {
    for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  });

  it('exports an agent to stdout and imports it into another database and organization', async () => {
    const [from, to] = urls as [string, string];
    // Blobs go under cwd/.memory-agents/blobs with --database-url; keep them in the test's folder.
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const source = await composeService({ databaseUrl: from }, silentLogger);
      await source.service.start();
      const org = await source.service.admin.createOrganization({ name: 'Acme' });
      const caller = await source.service.as(org.organizationId);
      const agent = await source.service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
      await source.service.idle();
      const thread = await source.service.threads.create({ caller, agentId: agent.agent_id, body: {} });
      await source.service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'Invoices go to billing@acme.test every Friday.' }] }] } });
      await source.service.idle();
      const upload = await source.service.observeFile({ caller, agentId: agent.agent_id, threadId: thread.thread_id, file: { filename: 'harbor.md', mediaType: null, data: new TextEncoder().encode(DOCUMENT) }, fields: {} });
      await source.service.idle();
      const before = await source.service.recall({ caller, agentId: agent.agent_id, body: { query: 'Where do invoices go?' } });
      await source.close();

      const exported = await run(['export', '--agent', agent.agent_id, '--database-url', from]);
      expect(exported.stderr).toBe('');
      expect(exported.code).toBe(0);
      const lines = exported.stdout.trimEnd().split('\n');
      expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'memory-agents-export', version: 1, agentId: agent.agent_id });
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: 'end' });
      const file = join(dir, 'agent.jsonl');
      await writeFile(file, exported.stdout);

      const created = await run(['orgs', 'create', '--name', 'Target', '--database-url', to, '--json']);
      const target = (JSON.parse(created.stdout) as { organization_id: string }).organization_id;

      // A truncated file: refused with its line, nothing imported.
      const truncatedFile = join(dir, 'truncated.jsonl');
      await writeFile(truncatedFile, `${lines.slice(0, -2).join('\n')}\n`);
      const refused = await run(['import', '--org', target, '--file', truncatedFile, '--database-url', to]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`The export file was refused at line ${lines.length - 1}: the file ends after line ${lines.length - 2} without its end line`);

      // A vector of the wrong length (valid JSON), and one base64 character of the original
      // changed: refused with the line before anything is written, not `internal` while writing.
      const pg = (await import('pg')).default;
      const db = new pg.Client({ connectionString: to });
      await db.connect();
      const rows = async () => {
        const counted = await db.query<{ agents: string; indexed: string; records: string }>(
          "SELECT (SELECT count(*) FROM agents) AS agents, (SELECT count(*) FROM memory_index_agents) AS indexed, (SELECT count(*) FROM memory_index_records) AS records",
        );
        return counted.rows[0];
      };
      try {
        const before = await rows();
        const memoryAt = lines.findIndex((l) => l.includes('"type":"memory"'));
        const chunkAt = lines.findIndex((l) => l.includes('"type":"source_chunk"'));
        const memoryLine = JSON.parse(lines[memoryAt]!) as { memory: { id: string; vector: string } };
        const dimensions = (JSON.parse(lines[0]!) as { embedder: { dimensions: number } }).embedder.dimensions;
        const shortVector = Buffer.from(new Float32Array(dimensions - 10).buffer).toString('base64');
        const chunk = JSON.parse(lines[chunkAt]!) as { data: string };
        const damaged: [string, string[], string][] = [
          [
            'short-vector.jsonl',
            lines.map((l, i) => (i === memoryAt ? JSON.stringify({ ...memoryLine, memory: { ...memoryLine.memory, vector: shortVector } }) : l)),
            `The export file was refused at line ${memoryAt + 1}: memory ${memoryLine.memory.id}: its vector has ${dimensions - 10} dimensions, but the header's embedder`,
          ],
          [
            'changed-chunk.jsonl',
            lines.map((l, i) => (i === chunkAt ? JSON.stringify({ ...chunk, data: `${chunk.data.slice(0, 4)}${chunk.data[4] === 'Q' ? 'R' : 'Q'}${chunk.data.slice(5)}` }) : l)),
            `The export file was refused at line ${chunkAt + 1}: the stored original ${upload.source_id} does not match its checksum`,
          ],
        ];
        for (const [name, changed, message] of damaged) {
          await writeFile(join(dir, name), `${changed.join('\n')}\n`);
          const bad = await run(['import', '--org', target, '--file', join(dir, name), '--database-url', to, '--json']);
          expect(bad.code, name).toBe(1);
          expect(JSON.parse(bad.stderr), name).toMatchObject({ code: 'invalid_request', error: expect.stringContaining(message) });
          expect(await rows(), name).toEqual(before);
        }
      } finally {
        await db.end();
      }

      const imported = await run(['import', '--org', target, '--file', file, '--database-url', to, '--json']);
      expect(imported.stderr).toBe('');
      expect(imported.code).toBe(0);
      const result = JSON.parse(imported.stdout) as { agent_id: string; from_agent_id: string; memories: number; reembedded: boolean };
      expect(result).toMatchObject({ from_agent_id: agent.agent_id, reembedded: false });
      expect(result.memories).toBeGreaterThan(1);

      const copy = await composeService({ databaseUrl: to }, silentLogger);
      await copy.service.start();
      try {
        const targetCaller = await copy.service.as(target);
        expect((await copy.service.agents.list({ caller: targetCaller })).map((a) => a.agent_id)).toEqual([result.agent_id]);
        const after = await copy.service.recall({ caller: targetCaller, agentId: result.agent_id, body: { query: 'Where do invoices go?' } });
        expect(after.memory_context).toBe(before.memory_context);
        const sourceLine = lines.map((l) => JSON.parse(l) as { type: string; sourceId?: string }).find((l) => l.type === 'source');
        expect(sourceLine?.sourceId).toBe(upload.source_id);
        const docRecall = await copy.service.recall({ caller: targetCaller, agentId: result.agent_id, body: { query: 'when does the harbor open' } });
        const cited = docRecall.citations.map((c) => c.target).find((t) => t.kind === 'source');
        expect(cited && cited.source_id).toMatch(/^src_/);
        expect(cited && cited.source_id).not.toBe(upload.source_id);
        const original = await copy.service.sources.get({ caller: targetCaller, agentId: result.agent_id, sourceId: cited!.kind === 'source' ? cited!.source_id : '' });
        expect(new TextDecoder().decode(original.data)).toBe(DOCUMENT);
      } finally {
        await copy.close();
      }
    } finally {
      process.chdir(cwd);
    }
  });

  it('leaves the memory index analysed and vacuumed after importing more memories than settleAfterRows (issue 41)', async () => {
    const [from, , to] = urls as [string, string, string];
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const source = await composeService({ databaseUrl: from }, silentLogger);
      await source.service.start();
      const org = await source.service.admin.createOrganization({ name: 'Bulk' });
      const caller = await source.service.as(org.organizationId);
      const agent = await source.service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
      await source.service.idle();
      const thread = await source.service.threads.create({ caller, agentId: agent.agent_id, body: {} });
      await source.service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'Invoices go to billing@acme.test every Friday.' }] }] } });
      await source.service.idle();
      await source.close();
      const exported = await run(['export', '--agent', agent.agent_id, '--database-url', from]);
      expect(exported.code).toBe(0);

      // 10,200 memories (the adapter settles after 10,000 written rows): the file's memory lines
      // repeated under other ids, and the end line's count to match.
      const lines = exported.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string; memory?: { id: string; text: string }; counts?: Record<string, number> });
      const memories = lines.filter((line) => line.type === 'memory');
      expect(memories.length).toBeGreaterThan(0);
      const copies = Array.from({ length: 10_200 }, (_, i) => {
        const line = memories[i % memories.length]!;
        return { ...line, memory: { ...line.memory!, id: `mem_bulk${i}`, text: `${line.memory!.text} (${i})` } };
      });
      const end = lines.at(-1)!;
      const bulk = [...lines.filter((line) => line.type !== 'memory' && line.type !== 'end'), ...copies, { ...end, counts: { ...end.counts, memory: copies.length } }];
      const file = join(dir, 'bulk.jsonl');
      await writeFile(file, `${bulk.map((line) => JSON.stringify(line)).join('\n')}\n`);

      const created = await run(['orgs', 'create', '--name', 'Target', '--database-url', to, '--json']);
      const target = (JSON.parse(created.stdout) as { organization_id: string }).organization_id;
      const imported = await run(['import', '--org', target, '--file', file, '--database-url', to, '--json']);
      expect(imported.code, imported.stderr).toBe(0); // stderr: progress every 1,000 memories
      expect((JSON.parse(imported.stdout) as { memories: number }).memories).toBe(10_200);

      // Before: the import closed the index right after its last write, which dropped the settle
      // that was due, and with autovacuum off nothing ever analysed the tables.
      const pg = (await import('pg')).default;
      const check = new pg.Client({ connectionString: to });
      await check.connect();
      try {
        const { rows } = await check.query<{ relname: string; last_analyze: Date | null; last_vacuum: Date | null }>(
          `SELECT relname, last_analyze, last_vacuum FROM pg_stat_user_tables
           WHERE schemaname = 'public' AND relname IN ('memory_index_records', 'memory_index_terms', 'memory_index_postings') ORDER BY relname`,
        );
        expect(rows.map((row) => row.relname)).toEqual(['memory_index_postings', 'memory_index_records', 'memory_index_terms']);
        for (const row of rows) {
          expect(row.last_analyze, row.relname).toBeInstanceOf(Date);
          expect(row.last_vacuum, row.relname).toBeInstanceOf(Date);
        }
      } finally {
        await check.end();
      }
    } finally {
      process.chdir(cwd);
    }
  }, 240_000);

  it('refuses export without --agent and import without --org as usage errors', async () => {
    expect(await run(['export', '--database-url', urls[0]!])).toMatchObject({ code: 2 });
    const noOrg = await run(['import', '--file', 'x.jsonl', '--database-url', urls[0]!]);
    expect(noOrg.code).toBe(2);
    expect(noOrg.stderr).toContain('import needs --org ORG_ID');
  });
});
