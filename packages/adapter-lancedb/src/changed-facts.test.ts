import { createMemoryService, inMemoryStore, silentLogger } from '@memory-agents/core';
import { afterAll, describe, it } from 'vitest';
// The issue-32 conversations kept with core's tests (a fixture, not a published module).
import { CHANGED_FACTS, expectCurrentTruth } from '../../core/src/__fixtures__/changed-facts.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

/**
 * Issue 32 on the LanceDB index through the service: validity is filtered in LanceDB's `where`, supersession
 * goes through `update`, `as_of` through `search`'s asOf. Same assertions as core's
 * chat/changed-facts.test.ts (in-memory index) and adapter-postgres's (PGlite).
 */
describe('changed facts on LanceDB (validity and history)', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'memory-agents-changed-facts-'));
  const service = createMemoryService({ store: inMemoryStore(), index: lancedbMemoryIndex({ uri: directory }), logger: silentLogger });
  await service.start();
  afterAll(async () => {
    await service.stop();
    await rm(directory, { recursive: true, force: true });
  });
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const owner = await service.as(org.organizationId);

  it.each(CHANGED_FACTS.map((fact) => [fact.name, fact] as const))('%s: recall and chat give the new value, as_of the old one', async (_, fact) => {
    await expectCurrentTruth(service, owner, fact);
  });
});
