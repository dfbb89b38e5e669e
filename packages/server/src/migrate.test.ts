import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type MemoryService } from '@memory-agents/core';
import { createCanvas } from '@napi-rs/canvas';
import { postgresUrl } from '@memory-agents/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from './cli-main.js';
import { composeService } from './compose.js';
import { MigrationRefused, migrateDataDir } from './migrate.js';

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

  it('refuses a second data dir before writing anything: the database already holds another one', { timeout: 240_000 }, async () => {
    const second = `${database}_two`;
    await admin.query(`CREATE DATABASE ${second}`);
    const secondUrl = new URL(target);
    secondUrl.pathname = `/${second}`;
    const into = secondUrl.toString();
    const blobs = join(dir, 'blobs-two');
    /** A data dir with one organization, an agent and an uploaded document (a blob). */
    async function dataDirWith(name: string) {
      const dataDir = join(dir, name);
      const composed = await composeService({ dataDir }, silentLogger);
      await composed.service.start();
      const org = await composed.service.admin.createOrganization({ name });
      const caller = await composed.service.as(org.organizationId);
      const agent = await composed.service.agents.create({ caller, body: { agent_config: { role: name, objective: 'o' } } });
      await composed.service.idle();
      const thread = await composed.service.threads.create({ caller, agentId: agent.agent_id, body: {} });
      await composed.service.observeFile({ caller, agentId: agent.agent_id, threadId: thread.thread_id, file: { filename: `${name}.md`, mediaType: null, data: new TextEncoder().encode(`# ${name}\n\n${name} opens at dawn.\n`) }, fields: {} });
      await composed.service.idle();
      await composed.close();
      return { dataDir, organizationId: org.organizationId };
    }
    const pg = (await import('pg')).default;
    const db = new pg.Client({ connectionString: into });
    /** Rows of every table of the database (store, index, migration progress). */
    const rowCounts = async () => {
      const { rows } = await db.query<{ schema: string; name: string }>(
        `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
      );
      const counts: Record<string, number> = {};
      for (const { schema, name } of rows) counts[`${schema}.${name}`] = Number((await db.query(`SELECT count(*) AS n FROM "${schema}"."${name}"`)).rows[0].n);
      return counts;
    };
    const files = async () => (existsSync(blobs) ? (await readdir(blobs, { recursive: true })).sort() : []);
    try {
      const first = await dataDirWith('first');
      const other = await dataDirWith('other');
      const moved = await migrateDataDir({ dataDir: first.dataDir, databaseUrl: into, blobsDirectory: blobs });
      expect(moved.ok).toBe(true);
      await db.connect();
      const before = await rowCounts();
      expect(before['public.organizations']).toBe(1);
      const blobsBefore = await files();

      const refused = await migrateDataDir({ dataDir: other.dataDir, databaseUrl: into, blobsDirectory: blobs }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(MigrationRefused);
      expect((refused as Error).message).toBe(
        `the target database already holds organization ${first.organizationId} ("first"), which the data dir ${other.dataDir} does not; migrate moves one data dir into an empty PostgreSQL database (or finishes its own interrupted run), and would merge two. Nothing was written. Migrate into a new database (createdb), or empty this one first.`,
      );
      // The CLI says the same sentence and exits 1.
      let stdout = '';
      let stderr = '';
      const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {} };
      expect(await main(['migrate', '--data', other.dataDir, '--to', into, '--blobs', blobs], io)).toBe(1);
      expect(stderr).toContain(`the target database already holds organization ${first.organizationId}`);
      expect(stdout).toBe('');
      // Nothing written: every table holds what it held, and no blob was copied.
      expect(await rowCounts()).toEqual(before);
      expect(await files()).toEqual(blobsBefore);
      // Not even the blobs directory of a refused run is made.
      const elsewhere = join(dir, 'blobs-never');
      expect(await migrateDataDir({ dataDir: other.dataDir, databaseUrl: into, blobsDirectory: elsewhere }).catch((error: unknown) => error)).toBeInstanceOf(MigrationRefused);
      expect(existsSync(elsewhere)).toBe(false);

      // The data dir that is there may still run again (resume: nothing to do, verified).
      expect(await migrateDataDir({ dataDir: first.dataDir, databaseUrl: into, blobsDirectory: blobs })).toMatchObject({ ok: true, agents: 0, resumed: 2 });
    } finally {
      await db.end().catch(() => {});
      await admin.query(`DROP DATABASE IF EXISTS ${second} WITH (FORCE)`);
    }
  });
});
