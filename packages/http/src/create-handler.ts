import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MemoryService } from '@memory-agents/core';
import { createApiHandler, type ApiHandlerOptions } from './api-handler.js';
import { normalizeBasePath } from './citation-links.js';
import { bodyFinished } from './node/discard-body.js';
import { nodeRequestBody, headerRecord } from './node/request-body.js';
import { writeApiResponse } from './node/write-response.js';

export { DEFAULT_MAX_JSON_BYTES } from './api-handler.js';

/** Options of `createHandler`. */
export type HandlerOptions = ApiHandlerOptions;

export type NodeHandler = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

/**
 * The `/v1` API as a node:http request listener. Mount it in `http.createServer(handler)`, or in
 * express/fastify/hono-node; with a `next` argument, paths outside the API are passed on. The
 * returned promise never rejects.
 *
 * A thin bridge (as @hono/node-server's listener): it turns the `IncomingMessage` into the shared
 * core's request and writes the core's answer; routing, base paths, bodies, errors and headers
 * live in the core, the same for `createFetchHandler`. A body that middleware already parsed
 * (`req.body` set by `express.json()`) is used instead of the consumed stream.
 *
 * @example
 * const service = createMemoryService({ store: inMemoryStore() });
 * await service.start();
 * http.createServer(createHandler(service)).listen(8787);
 */
export function createHandler(service: MemoryService, options: HandlerOptions = {}): NodeHandler {
  const handle = createApiHandler(service, options);

  return async (request, response, next) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    // Express strips the prefix of `app.use('/prefix', handler)` from `req.url` and keeps it in `baseUrl`.
    const baseUrl = (request as { baseUrl?: unknown }).baseUrl;
    const body = nodeRequestBody(request);
    const abort = lazyAbort(response);
    const result = await handle(
      {
        method: (request.method ?? 'GET').toUpperCase(),
        pathname: url.pathname,
        mountedAt: typeof baseUrl === 'string' ? normalizeBasePath(baseUrl) : '',
        query: Object.fromEntries(url.searchParams),
        headers: headerRecord(request),
        body,
        abortSignal: abort.signal,
      },
      { passThrough: next !== undefined },
    );
    if (result === null) return next?.();
    // Refused before (or while) its body was read (401, 405, 413, 429 ...): the client may still
    // be sending; it must read this answer, not a reset connection (see discardBody), and the
    // answer ends only once that body has (bodyFinished).
    if (result.status >= 400) body.discard();
    try {
      await writeApiResponse(response, result, result.status >= 400 ? bodyFinished(request) : null);
    } catch {
      // The socket failed while the answer was written (the client went away): nothing to answer.
      if (!response.writableEnded) response.end();
    }
  };
}

/**
 * The request's abort signal, made on first use (most requests, reads and refusals, never look at
 * it, and an AbortController per request is a measurable share of a small request's time); it
 * aborts when the response closes before it was finished (the client went away).
 */
function lazyAbort(response: ServerResponse): { signal: () => AbortSignal } {
  let controller: AbortController | undefined;
  let gone = false;
  response.on('close', () => {
    if (response.writableFinished) return;
    gone = true;
    controller?.abort();
  });
  return {
    signal: () => {
      if (controller === undefined) {
        controller = new AbortController();
        if (gone) controller.abort();
      }
      return controller.signal;
    },
  };
}
