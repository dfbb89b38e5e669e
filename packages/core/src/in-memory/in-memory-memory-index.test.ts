import { describeMemoryIndexConformance } from '../testing/conformance/memory-index/index.js';
import { inMemoryMemoryIndex } from './in-memory-memory-index.js';

describeMemoryIndexConformance({ name: 'in-memory', persistent: false, create: async () => ({ port: inMemoryMemoryIndex() }) });
