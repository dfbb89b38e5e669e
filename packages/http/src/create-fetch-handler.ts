import type { MemoryService } from '@memory-agents/core';
import { createApiHandler, type ApiHandlerOptions } from './api-handler.js';
import { webRequestBody } from './fetch/request-body.js';
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
 * It uses Web APIs only (no `node:` module): import it from `@memory-agents/http/fetch` on an edge
 * runtime.
 *
 * @example
 * const api = createFetchHandler(service);
 * Bun.serve({ fetch: api });                       // or Deno.serve(api)
 * app.all('/v1/*', (c) => api(c.req.raw));          // Hono
 */
export function createFetchHandler(service: MemoryService, options: FetchHandlerOptions = {}): FetchHandler {
  const handle = createApiHandler(service, options);

  return async (request) => {
    const url = new URL(request.url);
    const result = await handle({
      method: request.method.toUpperCase(),
      pathname: url.pathname,
      mountedAt: '',
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(request.headers),
      body: webRequestBody(request),
      abortSignal: () => request.signal,
    });
    // Without `passThrough` the core answers every path (404 outside the API).
    return toWebResponse(result!, request.signal);
  };
}
