import { createMemoryService, inMemoryStore, silentLogger } from '@memory-agents/core';
import { afterAll, describe, it } from 'vitest';
// The issue-32 conversations kept with core's tests (a fixture, not a published module).
import { CHANGED_FACTS, expectCurrentTruth } from '../../core/src/__fixtures__/changed-facts.js';
import { postgresMemoryIndex } from './postgres-memory-index.js';
import { openSqlClient } from './sql-client.js';

/**
 * Issue 32 on the PGlite index through the service: validity is filtered inside SQL, supersession
 * goes through `update`, `as_of` through `search`'s asOf. Same assertions as core's
 * chat/changed-facts.test.ts (in-memory index).
 */
describe('changed facts on PGlite (validity and history)', async () => {
  const sql = await openSqlClient({ dataDir: 'memory://' });
  const service = createMemoryService({ store: inMemoryStore(), index: postgresMemoryIndex({ client: sql }), logger: silentLogger });
  await service.start();
  afterAll(async () => {
    await service.stop();
    await sql.close();
  });
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const owner = await service.as(org.organizationId);

  it.each(CHANGED_FACTS.map((fact) => [fact.name, fact] as const))('%s: recall and chat give the new value, as_of the old one', async (_, fact) => {
    await expectCurrentTruth(service, owner, fact);
  });
});
