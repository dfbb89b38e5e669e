// The poisoned-memory suite (issue 33) with memories stored in LanceDB: the `suspicious` mark and the
// stored text go through the table and back into the prompt.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describePoisonedMemoryConformance, servicePoisonedMemoryTarget } from '@memory-agents/core/testing';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

describePoisonedMemoryConformance({
  name: 'chat, LanceDB memory index',
  create: async () => {
    const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-poisoned-'));
    const target = await servicePoisonedMemoryTarget({ path: 'chat', index: lancedbMemoryIndex({ uri: directory }) });
    return {
      ...target,
      cleanup: async () => {
        await target.cleanup?.();
        await rm(directory, { recursive: true, force: true });
      },
    };
  },
});
