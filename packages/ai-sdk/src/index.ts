export { memoryMiddleware, lastUserText, type MemoryMiddleware, type MemoryMiddlewareOptions } from './memory-middleware.js';
export { memoryTools, type MemoryToolsOptions } from './memory-tools.js';
export type { MemoryConnection, MemoryTarget } from './memory-client.js';
