import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type MemoryService } from '@memory-agents/core';
import { createCanvas } from '@napi-rs/canvas';
import { postgresUrl } from '@memory-agents/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from './cli-main.js';
import { composeService } from './compose.js';
import { migrateDataDir } from './migrate.js';

const databaseUrl = postgresUrl('memory-agents migrate into PostgreSQL');
const DOCUMENT = '# Harbor\n\nThe harbor opens at dawn and closes at nine.\n';

/** The reads a client makes, on either side (ids are the same after a migration). */
async function reads(service: MemoryService, organizationId: string, ids: { agentId: string; threadId: string; observationId: string; sourceId: string }) {
  const caller = await service.as(organizationId);
  const { agentId, threadId } = ids;
  const original = await service.sources.get({ caller, agentId, sourceId: ids.sourceId });
  const billing = await service.billing({ caller });
  return {
    agents: (await service.agents.list({ caller })).map((a) => [a.agent_id, a.status]),
    messages: ((await service.threads.get({ caller, agentId, threadId })).messages ?? []).map((m) => [m.speaker, m.text, m.timestamp]),
    status: (await service.observationStatus({ caller, agentId, threadId, observationId: ids.observationId })).status,
    recall: (await service.recall({ caller, agentId, body: { query: 'Where do invoices go?' } })).memory_context,
    document: (await service.recall({ caller, agentId, body: { query: 'when does the harbor open' } })).memory_context,
    balance: billing.balance,
    ledger: (billing as { entries?: unknown[] }).entries?.length ?? null,
    source: new TextDecoder().decode(original.data),
  };
}

describe.skipIf(!databaseUrl)('memory-agents migrate: a data dir into PostgreSQL (DATABASE_URL)', () => {
  const database = `ma_mig_${randomBytes(4).toString('hex')}`;
  const url = new URL(databaseUrl ?? 'postgres://unset/');
  url.pathname = `/${database}`;
  const target = url.toString();
  let dir = '';
  let admin: import('pg').Client;

  beforeAll(async () => {
    const pg = (await import('pg')).default;
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    dir = await mkdtemp(join(tmpdir(), 'ma-migrate-'));
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  });

  it('moves what was built through the API, resumes after an interruption, and serves the same reads', { timeout: 240_000 }, async () => {
    const dataDir = join(dir, 'data');
    // Where a server run with --database-url and --data-less cwd `dir` would read blobs: dir/blobs.
    const blobs = join(dir, 'blobs');
    const source = await composeService({ dataDir }, silentLogger);
    await source.service.start();
    const org = await source.service.admin.createOrganization({ name: 'Acme', credits: '1000' });
    await source.service.admin.createKey({ organizationId: org.organizationId });
    const caller = await source.service.as(org.organizationId);
    const agentIds: string[] = [];
    for (const name of ['first', 'second']) {
      const agent = await source.service.agents.create({ caller, body: { agent_config: { role: name, objective: 'o' } } });
      agentIds.push(agent.agent_id);
    }
    await source.service.idle();
    const agentId = agentIds[0]!;
    const thread = await source.service.threads.create({ caller, agentId, body: {} });
    const observed = await source.service.observe({ caller, agentId, threadId: thread.thread_id, body: { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'Invoices go to billing@acme.test every Friday.' }] }] } });
    await source.service.idle();
    const upload = await source.service.observeFile({ caller, agentId, threadId: thread.thread_id, file: { filename: 'harbor.md', mediaType: null, data: new TextEncoder().encode(DOCUMENT) }, fields: {} });
    await source.service.idle();
    await source.service.chat({ caller, agentId, threadId: thread.thread_id, body: { turn_id: 't1', message: 'Where do invoices go?' } });
    await source.service.idle();
    // An uploaded chat image: its record moves with the organization, its bytes with the blobs.
    const canvas = createCanvas(4, 3);
    canvas.getContext('2d').fillRect(0, 0, 4, 3);
    const image = await source.service.images.upload({ caller, file: { filename: 'dot.png', mediaType: 'image/png', data: new Uint8Array(await canvas.encode('png')) } });
    const ids = { agentId, threadId: thread.thread_id, observationId: observed.observation_id, sourceId: upload.source_id! };
    const before = await reads(source.service, org.organizationId, ids);
    expect(before.recall).toContain('billing@acme.test');
    await source.close();

    // Interrupted after the first agent: the second run resumes and ends where one run would.
    let calls = 0;
    await expect(
      migrateDataDir({
        dataDir,
        databaseUrl: target,
        blobsDirectory: blobs,
        beforeAgent: () => {
          if (++calls === 2) throw new Error('interrupted');
        },
      }),
    ).rejects.toThrow('interrupted');

    let stdout = '';
    let stderr = '';
    const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {} };
    const code = await main(['migrate', '--data', dataDir, '--to', target, '--blobs', blobs, '--json'], io);
    expect(stderr).toContain('moved');
    expect(code, stdout).toBe(0);
    const report = JSON.parse(stdout) as { ok: boolean; agents: number; resumed: number; searches: { checked: number; matched: number }; checks: { ok: boolean }[] };
    expect(report).toMatchObject({ ok: true, agents: 1, resumed: 2 });
    expect(report.searches.checked).toBeGreaterThan(0);
    expect(report.searches.matched).toBe(report.searches.checked);
    expect(existsSync(blobs)).toBe(true);

    // The same reads against a server on the result (blobs where the migration put them).
    const moved = await composeService({ databaseUrl: target, dataDir: dir }, silentLogger);
    await moved.service.start();
    try {
      const after = await reads(moved.service, org.organizationId, ids);
      expect(after).toEqual(before);
    } finally {
      await moved.close();
    }

    // Running it again changes nothing and verifies again.
    stdout = '';
    expect(await main(['migrate', '--data', dataDir, '--to', target, '--blobs', blobs, '--json'], io)).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, agents: 0, resumed: 3 });

    // A chat turn naming the uploaded image finds it on PostgreSQL (an id not moved would be 404).
    const served = await composeService({ databaseUrl: target, dataDir: dir }, silentLogger);
    await served.service.start();
    try {
      const caller = await served.service.as(org.organizationId);
      const answered = await served.service.chat({ caller, agentId, threadId: thread.thread_id, body: { turn_id: 't2', message: 'What is in the picture?', images: [image.image_id] } });
      expect(answered.message.length).toBeGreaterThan(0);
    } finally {
      await served.close();
    }
  });
});
