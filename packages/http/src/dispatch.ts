import { SpanStatusCode, trace } from '@opentelemetry/api';
import { ServiceError, isServiceError, type MemoryService } from '@memory-agents/core';
import { readJsonBody } from './json-body.js';
import { readMultipart } from './multipart.js';
import type { ApiRequest } from './request.js';
import type { HttpMethod, ParsedUpload, Route, RouteInput, RouteResult, WithStatus } from './route.js';
import type { Caller, RateLimitStatus } from '@memory-agents/core';

const tracer = trace.getTracer('@memory-agents/http');

export type RouteMatch = { route: Route; params: Record<string, string> };

type CompiledRoute = { route: Route; pattern: RegExp; names: string[] };

/** Compiles the table once; `match` then finds the route of a method and path. */
export function createRouter(routes: readonly Route[]) {
  const compiled: CompiledRoute[] = routes.map((route) => {
    const names: string[] = [];
    const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_match, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    return { route, pattern: new RegExp(`^${source}$`), names };
  });

  return {
    /**
     * The route for `method` and `path`; `{ allowed }` when the path exists under other methods
     * (405), null when no route has this path (404).
     */
    match(method: string, path: string): RouteMatch | { allowed: HttpMethod[] } | null {
      const allowed: HttpMethod[] = [];
      for (const { route, pattern, names } of compiled) {
        const found = pattern.exec(path);
        if (!found) continue;
        if (route.method !== method) {
          allowed.push(route.method);
          continue;
        }
        const params: Record<string, string> = {};
        names.forEach((name, i) => {
          params[name] = safeDecode(found[i + 1]!);
        });
        return { route, params };
      }
      return allowed.length > 0 ? { allowed } : null;
    },
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** What dispatch adds to the request: its id, the limits and where the rate status goes. */
export type DispatchContext = {
  requestId: string;
  /** The prefix the client reached the API under ('' at the root), for links in responses. */
  basePath: string;
  maxJsonBytes: number;
  /** Receives the status of the route's request window (for the `X-RateLimit-*` headers). */
  onRateLimit: (status: RateLimitStatus) => void;
};

/**
 * Authenticates, reads the body and runs the route's one service call; answers with the route's
 * success status. Throws `ServiceError`.
 */
export async function dispatch(service: MemoryService, match: RouteMatch, request: ApiRequest, context: DispatchContext): Promise<WithStatus<RouteResult>> {
  const caller = await tracer.startActiveSpan('memory_agents.authenticate', async (span) => {
    try {
      return await service.authenticate({
        authorization: request.headers.authorization,
        endUser: request.headers['x-sp-end-user'],
        secFetchSite: request.headers['sec-fetch-site'],
        requestId: context.requestId,
      });
    } catch (error) {
      // The code only (`unauthorized`, ...): never the key or the end user.
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', isServiceError(error) ? error.code : error instanceof Error ? error.name : 'error');
      throw error;
    } finally {
      span.end();
    }
  });
  if (match.route.rateLimit) {
    const decision = await service.limits.take({ caller, operation: match.route.rateLimit });
    context.onRateLimit(decision.status);
    if (!decision.allowed) throw decision.error;
  }
  const body = match.route.body ? await readJsonBody(request, context.maxJsonBytes) : undefined;
  const spec = match.route.upload;
  const upload = spec ? await readMultipart(request, { maxFileBytes: spec.maxFileBytes(caller), tooLargeCode: spec.tooLargeCode, fields: spec.fields }) : undefined;
  const result = await match.route.handler(new HandlerInput(service, caller, match.params, request, context.basePath, body, upload));
  return { ...result, status: match.route.status };
}

/**
 * A route handler's input: the request's parts and what dispatch found (caller, params, body). A
 * class so that `signal` is a getter on the prototype: the abort signal is made only when a
 * handler reads it (an object literal with a getter costs more than the signal saves).
 */
class HandlerInput implements RouteInput {
  readonly query: Record<string, string>;
  readonly headers: Record<string, string | undefined>;
  readonly upload?: ParsedUpload;
  readonly #abortSignal: () => AbortSignal;

  constructor(
    readonly service: MemoryService,
    readonly caller: Caller,
    readonly params: Readonly<Record<string, string>>,
    request: ApiRequest,
    readonly basePath: string,
    readonly body: unknown,
    upload: ParsedUpload | undefined,
  ) {
    this.query = request.query;
    this.headers = request.headers;
    if (upload) this.upload = upload;
    this.#abortSignal = request.abortSignal;
  }

  get signal(): AbortSignal {
    return this.#abortSignal();
  }
}

/** 404 for a path no route has. */
export const routeNotFound = () => new ServiceError('not_found', 'No such endpoint; every path starts with /v1 (see GET /v1/openapi.json).');
