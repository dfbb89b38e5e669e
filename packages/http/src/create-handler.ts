import type { IncomingMessage, ServerResponse } from 'node:http';
import { stderrLogger, type MemoryService } from '@memory-agents/core';
import { createApiHandler, type ApiHandlerOptions } from './api-handler.js';
import { normalizeBasePath } from './citation-links.js';
import { discardBody } from './node/discard-body.js';
import { readMultipart } from './node/multipart.js';
import { readNodeJsonBody, refuseConsumedUpload } from './node/parsed-body.js';
import { headerRecord } from './node/read-request.js';
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
 * core's request and writes the core's answer; routing, errors and headers live in the core, the
 * same for `createFetchHandler`. A body that middleware already parsed (`req.body` set by
 * `express.json()`) is used instead of the consumed stream.
 *
 * @example
 * const service = createMemoryService({ store: inMemoryStore() });
 * await service.start();
 * http.createServer(createHandler(service)).listen(8787);
 */
export function createHandler(service: MemoryService, options: HandlerOptions = {}): NodeHandler {
  const handle = createApiHandler(service, options);
  const basePath = normalizeBasePath(options.basePath);

  return async (request, response, next) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    // Express strips the prefix of `app.use('/prefix', handler)` from `req.url` and keeps it in `baseUrl`.
    const baseUrl = (request as { baseUrl?: unknown }).baseUrl;
    const mountedAt = typeof baseUrl === 'string' ? normalizeBasePath(baseUrl) : '';
    let path = url.pathname;
    if (basePath !== '') {
      if (path !== basePath && !path.startsWith(`${basePath}/`)) {
        if (next) return next();
        path = '/';
      } else path = path.slice(basePath.length) || '/';
    }
    const abort = lazyAbort(response);
    try {
      const result = await handle(
        {
          method: (request.method ?? 'GET').toUpperCase(),
          path,
          query: Object.fromEntries(url.searchParams),
          headers: headerRecord(request),
          basePath: `${mountedAt}${basePath}`,
          readJson: (limit) => readNodeJsonBody(request, limit),
          readUpload: async (upload) => {
            refuseConsumedUpload(request);
            return readMultipart(request, upload);
          },
          abortSignal: abort.signal,
        },
        { passThrough: next !== undefined },
      );
      if (result === null) return next?.();
      // Refused before (or while) its body was read (401, 405, 413, 429 ...): the client may still
      // be sending; it must read this answer, not a reset connection (see discardBody).
      if (result.status >= 400) discardBody(request);
      await writeApiResponse(response, result);
    } catch (error) {
      // The core never throws: this is an event source that failed mid-stream, after the headers.
      if (!abort.gone()) (options.logger ?? stderrLogger).error('response failed while streaming', { error: error instanceof Error ? error.message : String(error) });
      if (!response.writableEnded) response.end();
    }
  };
}

/**
 * The request's abort signal, made on first use (most requests, reads and refusals, never look at
 * it, and an AbortController per request is a measurable share of a small request's time); it
 * aborts when the response closes before it was finished (the client went away).
 */
function lazyAbort(response: ServerResponse): { signal: () => AbortSignal; gone: () => boolean } {
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
    gone: () => gone,
  };
}
