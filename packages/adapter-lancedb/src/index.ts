export { lancedbMemoryIndex, type LancedbMemoryIndexOptions } from './lancedb-memory-index.js';
