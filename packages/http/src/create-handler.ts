import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ServiceError, isServiceError, stderrLogger, type Logger, type MemoryService } from '@memory-agents/core';
import { createRouter, dispatch, routeNotFound } from './dispatch.js';
import { errorResponse } from './error-response.js';
import { discardBody } from './node/discard-body.js';
import { headerRecord, readJsonBody } from './node/read-request.js';
import { readMultipart } from './node/multipart.js';
import { writeSse } from './node/sse.js';
import { writeBinary, writeJson } from './node/write-response.js';
import { buildOpenApiDocument } from './openapi.js';
import { rateLimitTracker } from './rate-limit-headers.js';
import { ROUTES } from './routes/index.js';

/** Options of `createHandler`. */
export type HandlerOptions = {
  /**
   * Largest JSON request body in bytes; a larger one is refused with 413 while it streams.
   * @default 33554432 (32 MiB: room for a full `observe` of 100 long observations)
   */
  maxJsonBytes?: number;
  /** @default stderrLogger */
  logger?: Logger;
  /** Makes the `X-Request-Id` of each request. @default `req_` + a random UUID */
  requestId?: () => string;
};

/** Default `maxJsonBytes`. */
export const DEFAULT_MAX_JSON_BYTES = 32 * 1024 * 1024;

export type NodeHandler = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

/**
 * The `/v1` API as a node:http request listener. Mount it in `http.createServer(handler)`, or in
 * express/fastify/hono-node; with a `next` argument, paths outside the API are passed on. The
 * returned promise never rejects.
 *
 * @example
 * const service = createMemoryService({ store: inMemoryStore() });
 * await service.start();
 * http.createServer(createHandler(service)).listen(8787);
 */
export function createHandler(service: MemoryService, options: HandlerOptions = {}): NodeHandler {
  const maxJsonBytes = options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES;
  const logger = options.logger ?? stderrLogger;
  const makeRequestId = options.requestId ?? (() => `req_${randomUUID().replaceAll('-', '')}`);
  const router = createRouter(ROUTES);
  let openApi: string | null = null;

  return async (request, response, next) => {
    const requestId = makeRequestId();
    const url = new URL(request.url ?? '/', 'http://localhost');
    const method = (request.method ?? 'GET').toUpperCase();
    const abort = new AbortController();
    const rateLimit = rateLimitTracker(response, service.limits.now);
    response.on('close', () => {
      if (!response.writableFinished) abort.abort();
    });
    try {
      if (url.pathname === '/v1/openapi.json' && method === 'GET') {
        openApi ??= JSON.stringify(buildOpenApiDocument(ROUTES, { version: '0.1.0' }));
        writeJson(response, { status: 200, body: JSON.parse(openApi) }, requestId);
        return;
      }
      const match = router.match(method, url.pathname);
      if (match === null) {
        if (next) return next();
        throw routeNotFound();
      }
      if ('allowed' in match) {
        discardBody(request);
        const result = errorResponse(
          new ServiceError('invalid_request', `${method} is not allowed on ${url.pathname}; use ${match.allowed.join(', ')}.`, { status: 400 }),
          requestId,
          logger,
          405,
        );
        writeJson(response, { ...result, headers: { ...result.headers, Allow: match.allowed.join(', ') } }, requestId);
        return;
      }
      const result = await dispatch(service, match, {
        requestId,
        headers: headerRecord(request),
        query: Object.fromEntries(url.searchParams),
        readBody: () => readJsonBody(request, maxJsonBytes),
        readUpload: (spec, caller) => readMultipart(request, { maxFileBytes: spec.maxFileBytes(caller), tooLargeCode: spec.tooLargeCode, fields: spec.fields }),
        signal: abort.signal,
        onRateLimit: rateLimit.set,
      });
      if ('stream' in result) await writeSse(response, result, requestId);
      else if ('binary' in result) writeBinary(response, result, requestId);
      else writeJson(response, result, requestId);
    } catch (error) {
      // The client went away mid-request (an answer honoured the abort): nobody reads a reply, and
      // it is not a defect of the service, so it is not logged as one.
      if (abort.signal.aborted && !isServiceError(error)) {
        logger.debug('request aborted by the client', { requestId });
        if (!response.writableEnded) response.end();
        return;
      }
      // Refused before its body was read (401, 429, 413 ...): the client is still sending; it must
      // read this answer, not a reset (see discardBody).
      discardBody(request);
      const result = errorResponse(error, requestId, logger);
      if (result.status === 429 && isServiceError(error) && error.retryAfter !== undefined) rateLimit.refused(error.retryAfter);
      writeJson(response, result, requestId);
    }
  };
}
