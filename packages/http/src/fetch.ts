/**
 * `@memory-agents/http/fetch`: the Web fetch handler alone, for Bun, Deno and edge runtimes. Its
 * module graph holds no `node:` module and no node-only package (checked by fetch-entry.test.ts).
 */
export { createFetchHandler, type FetchHandler, type FetchHandlerOptions } from './create-fetch-handler.js';
export { DEFAULT_MAX_JSON_BYTES } from './api-handler.js';
