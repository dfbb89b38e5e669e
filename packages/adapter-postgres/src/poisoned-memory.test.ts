// The poisoned-memory suite (issue 33) with memories stored in PGlite: the `suspicious` mark and the
// stored text go through the database and back into the prompt.
import { describePoisonedMemoryConformance, servicePoisonedMemoryTarget } from '@memory-agents/core/testing';
import { postgresMemoryIndex } from './postgres-memory-index.js';
import { openSqlClient } from './sql-client.js';

describePoisonedMemoryConformance({
  name: 'chat, PGlite memory index',
  create: async () => {
    const sql = await openSqlClient({ dataDir: 'memory://' });
    const target = await servicePoisonedMemoryTarget({ path: 'chat', index: postgresMemoryIndex({ client: sql }) });
    return {
      ...target,
      cleanup: async () => {
        await target.cleanup?.();
        await sql.close();
      },
    };
  },
});
