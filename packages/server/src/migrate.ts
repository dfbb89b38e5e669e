import { createReadStream, createWriteStream } from 'node:fs';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createMemoryService, fileSystemBlobs, silentLogger, splitLines, type MemoryIndex, type MemoryService, type Store } from '@memory-agents/core';
import { openSqlClient, postgresMemoryIndex, postgresStore, type SqlClient } from '@memory-agents/adapter-postgres';
import type { ImageRecord, LedgerEntryRecord } from '@memory-agents/core/adapter';
import { dataPaths } from './paths.js';

/** One line of the verification: a count on both sides. */
export type MigrationCheck = { what: string; source: number | string; target: number | string; ok: boolean };

export type MigrationReport = {
  organizations: number;
  agents: number;
  /** Agents (and organizations) already moved by an earlier run, skipped. */
  resumed: number;
  blobsDirectory: string;
  checks: MigrationCheck[];
  searches: { checked: number; matched: number };
  ok: boolean;
};

export type MigrateOptions = {
  dataDir: string;
  databaseUrl: string;
  /** Where the PostgreSQL deployment keeps blobs: `serve --database-url` uses ./.memory-agents/blobs under its cwd. */
  blobsDirectory: string;
  log?: (line: string) => void;
  /** Test hook: called before each agent is moved (throw to simulate an interruption). */
  beforeAgent?: (agentId: string) => void | Promise<void>;
};

const PROGRESS_TABLE = 'memory_agents_migration';

/** The target holds what the data dir does not: nothing was written (issue 41). */
export class MigrationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationRefused';
  }
}

/**
 * `memory-agents migrate --data DIR --to postgres://...`: moves every organization (with its keys,
 * uploaded image records, billing account and ledger), every agent (through the export format, keeping every id and the
 * vectors as they are) and the blobs of an embedded data dir into PostgreSQL. Progress is recorded
 * in the target (`memory_agents_migration`: one row per organization and agent done), so a run
 * interrupted part-way is resumed by running it again: finished items are skipped, an agent left
 * half-written is removed and moved again. Then it settles the index, runs ANALYZE and verifies: counts per table and
 * organization/agent on both sides, and a sample of searches giving the same top hit.
 */
export async function migrateDataDir(options: MigrateOptions): Promise<MigrationReport> {
  const log = options.log ?? (() => {});
  const paths = dataPaths(options.dataDir);
  const { lancedbMemoryIndex } = await import('@memory-agents/adapter-lancedb');
  const source = { store: postgresStore({ dataDir: paths.pgdata }), index: lancedbMemoryIndex({ uri: paths.lancedb, readConsistencySeconds: null }) as MemoryIndex };
  const sourceService = createMemoryService({ ...source, blobs: fileSystemBlobs({ directory: paths.blobs }), logger: silentLogger, backgroundWork: false });
  const client = await openSqlClient({ connectionString: options.databaseUrl });
  const targetIndex = postgresMemoryIndex({ client });
  const target = { store: postgresStore({ client }), index: targetIndex as MemoryIndex };
  const targetService = createMemoryService({ ...target, blobs: fileSystemBlobs({ directory: options.blobsDirectory }), logger: silentLogger, backgroundWork: false });
  let work: string | null = null;
  try {
    await sourceService.start();
    // Before anything is written to the target (its schema included): it must be empty, or hold
    // only what this data dir holds (a run of this migration interrupted part-way).
    await refuseForeignContents(client, source.store, options.dataDir);
    work = await mkdtemp(join(tmpdir(), 'memory-agents-migrate-'));
    await mkdir(options.blobsDirectory, { recursive: true });
    await targetService.start();
    await client.query(`CREATE TABLE IF NOT EXISTS ${PROGRESS_TABLE} (item text PRIMARY KEY, done_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ item: string }>(`SELECT item FROM ${PROGRESS_TABLE}`)).rows.map((r) => r.item));
    const mark = (item: string) => client.query(`INSERT INTO ${PROGRESS_TABLE} (item) VALUES ($1) ON CONFLICT DO NOTHING`, [item]);
    let resumed = 0;
    let agentsMoved = 0;

    // Blobs first (content-addressed files, copied without overwriting): idempotent.
    await cp(paths.blobs, options.blobsDirectory, { recursive: true, force: false, errorOnExist: false }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    log(`blobs copied to ${options.blobsDirectory}`);

    const organizations = await source.store.organizations.list();
    for (const organization of organizations) {
      const orgItem = `organization:${organization.id}`;
      if (done.has(orgItem)) resumed++;
      else {
        await moveOrganization(source.store, target.store, organization.id);
        await mark(orgItem);
        log(`organization ${organization.id}: keys, billing account and ledger moved`);
      }
      for (const agent of await source.store.agents.list({ organizationId: organization.id })) {
        const item = `agent:${agent.id}`;
        if (done.has(item)) {
          resumed++;
          continue;
        }
        await options.beforeAgent?.(agent.id);
        // Left half-written by an interrupted run: remove it and move it again.
        await target.index.deleteBy({ agentId: agent.id });
        await target.store.agents.delete({ organizationId: organization.id, agentId: agent.id });
        const file = join(work, `${agent.id}.jsonl`);
        const out = createWriteStream(file);
        for await (const line of sourceService.admin.exportAgent({ organizationId: organization.id, agentId: agent.id })) {
          if (!out.write(line)) await once(out, 'drain');
        }
        out.end();
        await once(out, 'close');
        await targetService.admin.importAgent({ organizationId: organization.id, open: () => splitLines(createReadStream(file)), keepIds: true, keepVectors: true });
        await rm(file, { force: true });
        await mark(item);
        agentsMoved++;
        log(`agent ${agent.id} moved`);
      }
    }
    // After a bulk load the PostgreSQL index settles now rather than in the background: statistics
    // for the planner (VACUUM ANALYZE) and the vector index past its threshold; then the store's tables.
    await targetIndex.settle();
    await client.query('ANALYZE');
    const verification = await verify(source, target, sourceService, targetService);
    const report: MigrationReport = {
      organizations: organizations.length,
      agents: agentsMoved,
      resumed,
      blobsDirectory: options.blobsDirectory,
      ...verification,
    };
    return report;
  } finally {
    await sourceService.stop().catch(() => {});
    await targetService.stop().catch(() => {});
    await client.close().catch(() => {});
    if (work !== null) await rm(work, { recursive: true, force: true });
  }
}

/**
 * Refuses (`MigrationRefused`, nothing written) a target database that holds an organization or an
 * agent the data dir does not: migrating a second data dir into it would merge the two. An empty
 * database passes, and so does one a run of this same migration left part-way (what it holds is the
 * data dir's).
 */
async function refuseForeignContents(client: SqlClient, source: Store, dataDir: string): Promise<void> {
  const { rows: tables } = await client.query<{ organizations: string | null; agents: string | null }>(`SELECT to_regclass('organizations')::text AS organizations, to_regclass('agents')::text AS agents`);
  if (tables[0]?.organizations == null) return;
  const organizations = new Set((await source.organizations.list()).map((organization) => organization.id));
  const { rows: targetOrganizations } = await client.query<{ id: string; name: string }>('SELECT id, name FROM organizations ORDER BY id');
  const foreign = targetOrganizations.filter((row) => !organizations.has(row.id));
  const refuse = (what: string) =>
    new MigrationRefused(
      `the target database already holds ${what}, which the data dir ${dataDir} does not; migrate moves one data dir into an empty PostgreSQL database (or finishes its own interrupted run), and would merge two. Nothing was written. Migrate into a new database (createdb), or empty this one first.`,
    );
  if (foreign.length > 0) {
    const named = foreign.slice(0, 3).map((row) => `${row.id} (${JSON.stringify(row.name)})`).join(', ');
    throw refuse(`${foreign.length === 1 ? 'organization' : `${foreign.length} organizations`} ${named}${foreign.length > 3 ? ', …' : ''}`);
  }
  if (tables[0]?.agents == null) return;
  const agents = new Set((await source.agents.listByStatus({ statuses: ['initializing', 'ready', 'failed', 'importing', 'deleting', 'deleted'] })).map((agent) => agent.id));
  const { rows: targetAgents } = await client.query<{ id: string }>('SELECT id FROM agents ORDER BY id');
  const strangers = targetAgents.filter((row) => !agents.has(row.id));
  if (strangers.length > 0) throw refuse(`${strangers.length === 1 ? 'agent' : `${strangers.length} agents`} ${strangers.slice(0, 3).map((row) => row.id).join(', ')}${strangers.length > 3 ? ', …' : ''}`);
}

/** Page size of the image records read per query. */
const IMAGE_PAGE = 500;

/** Every uploaded image record (`img_`) of the organization, in id order. */
async function imagesOf(store: Store, organizationId: string): Promise<ImageRecord[]> {
  const images: ImageRecord[] = [];
  for (;;) {
    const page = await store.images.list({ organizationId, limit: IMAGE_PAGE, ...(images.length > 0 ? { afterId: images.at(-1)!.id } : {}) });
    images.push(...page);
    if (page.length < IMAGE_PAGE) return images;
  }
}

/** Organization, keys, uploaded image records, billing account and ledger entries (oldest first), in one transaction. */
async function moveOrganization(from: Store, to: Store, organizationId: string): Promise<void> {
  const organization = (await from.organizations.get({ id: organizationId }))!;
  const keys = await from.keys.list({ organizationId });
  const images = await imagesOf(from, organizationId);
  const account = await from.ledger.getAccount({ organizationId });
  const entries: LedgerEntryRecord[] = [];
  for (let before: number | undefined; ; ) {
    const page = await from.ledger.list({ organizationId, limit: 500, ...(before === undefined ? {} : { beforeEntryId: before }) });
    entries.push(...page);
    if (page.length < 500) break;
    before = page[page.length - 1]!.entryId;
  }
  await to.transaction(async (tx) => {
    if (await tx.organizations.get({ id: organizationId })) return;
    await tx.organizations.insert({ organization });
    for (const key of keys.reverse()) await tx.keys.insert({ key, maxLive: Number.MAX_SAFE_INTEGER, now: key.createdAt });
    for (const image of images) await tx.images.insert({ image });
    if (account) {
      await tx.ledger.configure({ organizationId, patch: { enabled: false } });
      for (const { entryId: _id, organizationId: _org, ...entry } of entries.reverse()) {
        const result = await tx.ledger.append({ organizationId, entry, requireFunds: false });
        if (!result.ok) throw new Error(`ledger entry ${_id} of ${organizationId} was refused (${result.reason})`);
      }
      await tx.ledger.configure({ organizationId, patch: { enabled: account.enabled, lowCreditThreshold: account.lowCreditThreshold, prices: account.prices } });
    }
  });
}

type Side = { store: Store; index: MemoryIndex };

async function verify(source: Side, target: Side, sourceService: MemoryService, targetService: MemoryService) {
  const checks: MigrationCheck[] = [];
  const check = (what: string, a: number | string, b: number | string) => checks.push({ what, source: a, target: b, ok: a === b });
  let checked = 0;
  let matched = 0;
  const orgs = await source.store.organizations.list();
  check('organizations', orgs.length, (await target.store.organizations.list()).length);
  for (const org of orgs) {
    const organizationId = org.id;
    check(`keys of ${organizationId}`, (await source.store.keys.list({ organizationId })).length, (await target.store.keys.list({ organizationId })).length);
    check(`images of ${organizationId}`, (await imagesOf(source.store, organizationId)).length, (await imagesOf(target.store, organizationId)).length);
    check(`balance of ${organizationId}`, (await source.store.ledger.getAccount({ organizationId }))?.balance ?? 'none', (await target.store.ledger.getAccount({ organizationId }))?.balance ?? 'none');
    check(`ledger entries of ${organizationId}`, (await source.store.ledger.list({ organizationId, limit: 100_000 })).length, (await target.store.ledger.list({ organizationId, limit: 100_000 })).length);
    const agents = await source.store.agents.list({ organizationId });
    check(`agents of ${organizationId}`, agents.length, (await target.store.agents.list({ organizationId })).length);
    for (const agent of agents) {
      const agentId = agent.id;
      const threads = await source.store.threads.list({ agentId });
      check(`threads of ${agentId}`, threads.length, (await target.store.threads.list({ agentId })).length);
      let jobsA = 0, jobsB = 0, messagesA = 0, messagesB = 0;
      for (const thread of threads) {
        jobsA += (await source.store.jobs.allForThread({ threadId: thread.id })).length;
        jobsB += (await target.store.jobs.allForThread({ threadId: thread.id })).length;
        messagesA += (await source.store.messages.listRecent({ threadId: thread.id, limit: Number.MAX_SAFE_INTEGER })).length;
        messagesB += (await target.store.messages.listRecent({ threadId: thread.id, limit: Number.MAX_SAFE_INTEGER })).length;
      }
      check(`observation jobs of ${agentId}`, jobsA, jobsB);
      check(`messages of ${agentId}`, messagesA, messagesB);
      check(`memories of ${agentId}`, (await source.index.stats({ agentId })).count, (await target.index.stats({ agentId })).count);
      // A sample of searches: each sampled memory's own text finds it first on both sides.
      const sample = (await source.index.list({ agentId, limit: 5 })).records;
      for (const record of sample) {
        checked++;
        const [a, b] = await Promise.all([
          source.index.search({ agentId, text: record.text, vector: null, limit: 3 }),
          target.index.search({ agentId, text: record.text, vector: null, limit: 3 }),
        ]);
        if (a.lexical[0]?.record.id === b.lexical[0]?.record.id) matched++;
      }
    }
  }
  void sourceService;
  void targetService;
  return { checks, searches: { checked, matched }, ok: checks.every((c) => c.ok) && matched === checked };
}
