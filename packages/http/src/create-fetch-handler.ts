import { stderrLogger, type MemoryService } from '@memory-agents/core';
import { createApiHandler, type ApiHandlerOptions } from './api-handler.js';
import { normalizeBasePath } from './citation-links.js';
import { readWebJsonBody, readWebUpload } from './fetch/read-body.js';
import { toWebResponse } from './fetch/to-response.js';

/** Options of `createFetchHandler`. */
export type FetchHandlerOptions = ApiHandlerOptions;

export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * The `/v1` API as a Web `fetch` handler, `(Request) => Promise<Response>`, for Hono, Next.js
 * route handlers, Bun, Deno and anything else that speaks the Fetch API. The same core as
 * `createHandler` (routes, errors, limits, headers); a path outside the API answers 404. With
 * `basePath: '/api/memory'` it serves `/api/memory/v1/...`, and citation links carry the prefix.
 * The returned promise never rejects; `request.signal` aborting stops the work and the stream.
 *
 * @example
 * const api = createFetchHandler(service);
 * Bun.serve({ fetch: api });                       // or Deno.serve(api)
 * app.all('/v1/*', (c) => api(c.req.raw));          // Hono
 */
export function createFetchHandler(service: MemoryService, options: FetchHandlerOptions = {}): FetchHandler {
  const handle = createApiHandler(service, options);
  const basePath = normalizeBasePath(options.basePath);
  const logger = options.logger ?? stderrLogger;

  return async (request) => {
    const url = new URL(request.url);
    let path = url.pathname;
    if (basePath !== '') path = path === basePath || path.startsWith(`${basePath}/`) ? path.slice(basePath.length) || '/' : '/';
    const result = await handle({
      method: request.method.toUpperCase(),
      path,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(request.headers),
      basePath,
      readJson: (limit) => readWebJsonBody(request, limit),
      readUpload: (upload) => readWebUpload(request, upload),
      abortSignal: () => request.signal,
    });
    // Without `passThrough` the core answers every path (404 outside the API).
    return toWebResponse(result!, request.signal, logger);
  };
}
