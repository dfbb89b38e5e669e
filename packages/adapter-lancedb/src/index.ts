export { lancedbMemoryIndex, type LancedbMemoryIndex, type LancedbMemoryIndexOptions } from './lancedb-memory-index.js';
