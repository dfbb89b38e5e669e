import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeMemoryIndexConformance } from '@memory-agents/core/testing';
import { jsonFileMemoryIndex } from './json-file-memory-index.js';

// Each test gets its own file in a fresh directory; `reopen` opens a second instance on the same
// file, which is how the suite checks that writes were persisted and not only kept in memory.
describeMemoryIndexConformance({
  name: 'jsonFileMemoryIndex (example)',
  create: async () => {
    const directory = await mkdtemp(join(tmpdir(), 'custom-memory-index-'));
    const file = join(directory, 'memories.json');
    return {
      port: jsonFileMemoryIndex({ file }),
      reopen: async () => jsonFileMemoryIndex({ file }),
      cleanup: () => rm(directory, { recursive: true, force: true }),
    };
  },
});
