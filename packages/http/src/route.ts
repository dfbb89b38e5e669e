import type { Caller, MemoryService } from '@memory-agents/core';
import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What a route handler receives: the authenticated caller and the request's parts. */
export type RouteInput = {
  service: MemoryService;
  caller: Caller;
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string | undefined>;
  /** Parsed JSON body (undefined when the request had none). */
  body: unknown;
  /** Aborts when the client disconnects. */
  signal: AbortSignal;
};

/** A JSON result; the HTTP layer adds `X-Request-Id` and writes it. */
export type JsonResult = { status: number; body: unknown; headers?: Record<string, string> };

/** One server-sent event: `event:` name and JSON `data:`. */
export type SseEvent = { event: string; data: unknown };

/** A `text/event-stream` result; the stream ends when the iterable does. */
export type StreamResult = { status: number; stream: AsyncIterable<SseEvent>; headers?: Record<string, string> };

export type RouteResult = JsonResult | StreamResult;

/**
 * One endpoint. The table of these is the only place routes exist: dispatch, the Node listener
 * and the OpenAPI document all read it.
 */
export type Route = {
  method: HttpMethod;
  /** Path template with `{name}` segments, e.g. `/v1/agents/{agent_id}`. */
  path: string;
  operationId: string;
  summary: string;
  /** Success status. */
  status: number;
  /** Request body schema (JSON), for validation by the service and for OpenAPI. */
  body?: z.ZodType;
  /** Query schema, for OpenAPI (the service validates). */
  query?: z.ZodType;
  /** Success body schema, for OpenAPI (for a stream: the schema of its final `done` event). */
  response: z.ZodType;
  /** True when the success response is `text/event-stream`. */
  streams?: boolean;
  /** Headers the operation reads besides `Authorization`, for OpenAPI. */
  headers?: readonly ('X-SP-End-User' | 'Idempotency-Key')[];
  /** Error statuses documented for the operation (401 and 503 are on every route). */
  errors: readonly number[];
  handler: (input: RouteInput) => Promise<RouteResult>;
};

/** Declares a route; exists so route files read as a table. */
export function route(definition: Route): Route {
  return definition;
}
