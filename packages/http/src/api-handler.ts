import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { HTTP_ERROR_CODES, isServiceError, stderrLogger, type HttpErrorCode, type Logger, type MemoryService } from '@memory-agents/core';
import { createRouter, dispatch, routeNotFound } from './dispatch.js';
import { errorResponse } from './error-response.js';
import { buildOpenApiDocument } from './openapi.js';
import { rateLimitTracker } from './rate-limit-headers.js';
import { normalizeBasePath } from './citation-links.js';
import type { ApiRequest } from './request.js';
import type { BinaryResult, JsonResult, StreamResult, WithStatus } from './route.js';
import { ROUTES } from './routes/index.js';
import { SSE_HEADERS, SSE_KEEP_ALIVE_MS, sseChunks, type SseChunks } from './sse.js';

/** Options both handlers share (`createHandler`, `createFetchHandler`). */
export type ApiHandlerOptions = {
  /**
   * Largest JSON request body in bytes; a larger one is refused with 413 while it streams.
   * @default 33554432 (32 MiB: room for a full `observe` of 100 long observations)
   */
  maxJsonBytes?: number;
  /**
   * The path prefix the API is served under, e.g. `/api/memory`: the handler then answers
   * `/api/memory/v1/...` and the citation links it hands out start with the prefix. A prefix a
   * framework already strips (Express `app.use('/api/memory', handler)`) is not repeated here:
   * the node handler reads it from `req.baseUrl`.
   * @default '' (the API at `/v1`)
   */
  basePath?: string;
  /** @default stderrLogger */
  logger?: Logger;
  /** Makes the `X-Request-Id` of each request. @default `req_` + a random UUID */
  requestId?: () => string;
  /**
   * Called once per answered request (for metrics): the route template (`/v1/agents/{agent_id}`,
   * never the raw path; `unmatched` for a path no route has), the status, and the time to the
   * answer's headers (an event stream's body is not counted). Synchronous: keep it cheap.
   * @default none
   */
  onRequest?: (request: RequestMeasurement) => void;
};

/** What {@link ApiHandlerOptions.onRequest} receives. */
export type RequestMeasurement = { method: string; route: string; status: number; durationMs: number };

const tracer = trace.getTracer('@memory-agents/http');

/** Default `maxJsonBytes`. */
export const DEFAULT_MAX_JSON_BYTES = 32 * 1024 * 1024;

export type { ApiRequest, RequestBody } from './request.js';

/** What a bridge writes: status, every header, and one of the body kinds. */
export type ApiResponse = { status: number; headers: Record<string, string> } & (
  | { kind: 'json'; text: string }
  | { kind: 'binary'; bytes: Uint8Array }
  /** Bytes written as they are read (a large file); Content-Length is set. */
  | { kind: 'chunks'; chunks: AsyncIterable<Uint8Array> }
  | { kind: 'events'; chunks: SseChunks }
  /** The client went away before an answer existed; nobody reads a reply. */
  | { kind: 'aborted' }
);

/**
 * The path below `basePath`, or null when `pathname` is outside it (the API is not there).
 * `basePath` is normalized ('' or `/prefix` without a trailing slash).
 */
export function stripBasePath(pathname: string, basePath: string): string | null {
  if (basePath === '') return pathname;
  if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) return null;
  return pathname.slice(basePath.length) || '/';
}

/**
 * The runtime-neutral core of both handlers: base-path stripping, routing, the OpenAPI document,
 * 404/405, reading bodies (the capped JSON reader and the multipart parser, over the bridge's
 * byte chunks), dispatch, the error mapper, `X-Request-Id`, rate-limit headers, and the log of an
 * event stream that fails after its headers. Returns null for a path outside the API when
 * `passThrough` is set (the node handler then calls `next`). The returned promise never rejects.
 */
export function createApiHandler(service: MemoryService, options: ApiHandlerOptions = {}) {
  const maxJsonBytes = options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES;
  const logger = options.logger ?? stderrLogger;
  const makeRequestId = options.requestId ?? (() => `req_${globalThis.crypto.randomUUID().replaceAll('-', '')}`);
  const router = createRouter(ROUTES);
  const basePath = normalizeBasePath(options.basePath);
  let openApi: Record<string, unknown> | null = null;

  const openApiText = (basePath: string) => {
    openApi ??= buildOpenApiDocument(ROUTES);
    return JSON.stringify(basePath === '' ? openApi : { ...openApi, servers: [{ url: basePath }] });
  };

  const onRequest = options.onRequest;
  // One server span per request (a no-op unless the application registered an OpenTelemetry SDK),
  // named after the route template once it is known; ids stay out of names and attributes.
  return function handle(request: ApiRequest, passing: { passThrough?: boolean } = {}): Promise<ApiResponse | null> {
    const started = performance.now();
    const note = { route: 'unmatched' };
    return tracer.startActiveSpan('memory_agents.request', { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method } }, async (span) => {
      const response = await answer(request, passing, note);
      if (response) {
        span.updateName(`${request.method} ${note.route}`);
        span.setAttribute('http.route', note.route);
        span.setAttribute('http.response.status_code', response.status);
        if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        onRequest?.({ method: request.method, route: note.route, status: response.status, durationMs: performance.now() - started });
      }
      span.end();
      return response;
    });
  };

  async function answer(request: ApiRequest, { passThrough = false }: { passThrough?: boolean }, note: { route: string }): Promise<ApiResponse | null> {
    const path = stripBasePath(request.pathname, basePath);
    if (path === null && passThrough) return null;
    const requestId = makeRequestId();
    const { method } = request;
    const linkBase = `${request.mountedAt}${basePath}`;
    const rateLimit = rateLimitTracker(service.limits.now);
    // Every response starts with the rate-limit headers (as they stand when it is written) and the request id.
    const base = () => {
      const headers = rateLimit.headers();
      headers['X-Request-Id'] = requestId;
      return headers;
    };
    const json = (result: WithStatus<JsonResult>) => jsonResponse(result, base());

    try {
      // Health for load balancers, outside /v1: no key, nothing about any organization.
      if ((path === '/healthz' || path === '/readyz') && (method === 'GET' || method === 'HEAD')) {
        note.route = path;
        const body = path === '/healthz' ? { status: 'ok' } : await readiness(service);
        const status = body.status === 'ok' || body.status === 'ready' ? 200 : 503;
        return { status, headers: { 'X-Request-Id': requestId, 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' }, kind: 'json', text: JSON.stringify(body) };
      }
      if (path === '/v1/openapi.json' && method === 'GET') {
        note.route = path;
        const text = openApiText(linkBase);
        return { status: 200, headers: { ...base(), 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' }, kind: 'json', text };
      }
      const match = path === null ? null : router.match(method, path);
      if (match === null) {
        if (passThrough) return null;
        throw routeNotFound();
      }
      if ('route' in match) note.route = match.route.path;
      if ('allowed' in match) {
        // 405 is not in the spec's table: its own code (HTTP_ERROR_CODES), not invalid_request (400/422).
        const body = { error: `${method} is not allowed on ${path}; use ${match.allowed.join(', ')}.`, code: 'method_not_allowed' satisfies HttpErrorCode, request_id: requestId };
        return json({ status: HTTP_ERROR_CODES.method_not_allowed.status, body, headers: { Allow: match.allowed.join(', ') } });
      }
      const result = await dispatch(service, match, request, { requestId, basePath: linkBase, maxJsonBytes, onRateLimit: rateLimit.set });
      return 'stream' in result || 'binary' in result ? toApiResponse(result, base(), logger) : json(result);
    } catch (error) {
      // The client went away mid-request (an answer honoured the abort): nobody reads a reply, and
      // it is not a defect of the service, so it is not logged as one.
      if (request.abortSignal().aborted && !isServiceError(error)) {
        logger.debug('request aborted by the client', { requestId });
        return { status: 499, headers: { 'X-Request-Id': requestId }, kind: 'aborted' };
      }
      const result = errorResponse(error, requestId, logger);
      if (result.status === 429 && isServiceError(error) && error.retryAfter !== undefined) rateLimit.refused(error.retryAfter);
      return json(result);
    }
  }
}

export type ApiHandle = ReturnType<typeof createApiHandler>;

/**
 * The body of `GET /readyz`: `ready` when the store and the memory index answer, else
 * `unavailable` with the sentence of the first part that did not (`checks` names each part).
 */
async function readiness(service: MemoryService): Promise<{ status: 'ready' | 'unavailable'; error?: string; checks: Record<string, 'ok' | 'unavailable'>; reembedding?: ReembeddingBody }> {
  const found = await service.ready();
  const checks = { store: found.store.ok ? 'ok' : 'unavailable', index: found.index.ok ? 'ok' : 'unavailable' } as const;
  // An extension (docs/api.md): a re-embed in progress, with no id or text of any organization.
  const progress = found.reembedding;
  const reembedding = progress ? { reembedding: { from: progress.from.id, to: progress.to.id, done: progress.done, total: progress.total } } : {};
  if (found.ready) return { status: 'ready', checks, ...reembedding };
  return { status: 'unavailable', error: found.store.error ?? found.index.error ?? 'A dependency did not respond.', checks };
}

/** `GET /readyz`'s `reembedding`: the embedders' ids and how many memories are re-embedded of how many. */
type ReembeddingBody = { from: string; to: string; done: number; total: number };

/** A JSON result as written: the body as text (none for 204) after `headers` and the result's own. */
function jsonResponse(result: WithStatus<JsonResult>, headers: Record<string, string>): ApiResponse {
  const text = result.status === 204 ? '' : JSON.stringify(result.body);
  const all = result.headers ? Object.assign(headers, result.headers) : headers;
  if (text !== '') all['Content-Type'] = 'application/json; charset=utf-8';
  all['Cache-Control'] = 'no-store';
  return { status: result.status, headers: all, kind: 'json', text };
}

/** A stream or binary result as written, after `headers` and the result's own. */
function toApiResponse(result: WithStatus<StreamResult | BinaryResult>, headers: Record<string, string>, logger: Logger): ApiResponse {
  if ('stream' in result) {
    return { status: result.status, headers: { ...headers, ...result.headers, ...SSE_HEADERS }, kind: 'events', chunks: loggedFailure(sseChunks(result.stream, SSE_KEEP_ALIVE_MS), logger) };
  }
  const { binary } = result;
  const whole = binary instanceof Uint8Array;
  const all = {
    ...headers,
    ...result.headers,
    'Content-Length': String(whole ? binary.byteLength : binary.bytes),
    'Cache-Control': 'private, no-store',
    'X-Content-Type-Options': 'nosniff',
  };
  return whole ? { status: result.status, headers: all, kind: 'binary', bytes: binary } : { status: result.status, headers: all, kind: 'chunks', chunks: binary.chunks };
}

/**
 * An event stream whose source fails after the headers were sent: the failure is logged (the one
 * place for both bridges) and the stream ends there, as a finished one does.
 */
function loggedFailure(chunks: SseChunks, logger: Logger): SseChunks {
  return {
    async next() {
      try {
        return await chunks.next();
      } catch (error) {
        logger.error('response failed while streaming', { error: error instanceof Error ? error.message : String(error) });
        chunks.close();
        return { done: true, value: undefined };
      }
    },
    close: () => chunks.close(),
  };
}
