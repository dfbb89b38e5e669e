import type { Caller, ErrorCode, FileUpload, MemoryService, RateLimitedOperation } from '@memory-agents/core';
import type { HttpMethod, Operation, OperationBody, OperationTag, PathParams } from '@memory-agents/core/contract';
import type { z } from 'zod';

export type { HttpMethod, PathParams };

/** The OpenAPI tag (route group) of a route; their descriptions are in openapi.ts. */
export type RouteTag = OperationTag;

/**
 * The decoded path parameters of a route: exactly the template's names (the router matches a
 * segment only when it is non-empty, so each is a string of at least one character).
 */
export type RouteParams<Path extends string> = string extends Path ? Readonly<Record<string, string>> : Readonly<Record<PathParams<Path>, string>>;

/** What a route handler receives: the authenticated caller and the request's parts, typed from its contract entry. */
export type RouteInput<O extends Operation = Operation> = {
  service: MemoryService;
  caller: Caller;
  params: RouteParams<O['path']>;
  query: Record<string, string>;
  headers: Record<string, string | undefined>;
  /** The mount prefix the client reached the API under ('' at the root): citation links start with it. */
  basePath: string;
  /**
   * Parsed JSON body, typed as the input of the operation's `body` schema but not validated here:
   * the core validates every body (422 `invalid_request` on a wrong shape, also when none was sent),
   * so handlers pass it on as the core call's input.
   */
  body: Operation extends O ? unknown : OperationBody<O>;
  /** The parsed multipart form, on routes with `upload`. */
  upload?: ParsedUpload;
  /** Aborts when the client disconnects. */
  signal: AbortSignal;
};

/**
 * What a route handler returns. It carries no status: a success answers with the route's
 * `status` (the one place a route states it, which OpenAPI documents too); failures are thrown.
 */
export type RouteResult = JsonResult | StreamResult | BinaryResult;

/** A JSON result; the HTTP layer adds `X-Request-Id` and writes it. */
export type JsonResult = { body: unknown; headers?: Record<string, string> };

/** One server-sent event: `event:` name and JSON `data:`. */
export type SseEvent = { event: string; data: unknown };

/** A `text/event-stream` result; the stream ends when the iterable does. */
export type StreamResult = { stream: AsyncIterable<SseEvent>; headers?: Record<string, string> };

/**
 * Raw bytes (a stored original served back), whole or as chunks read as they are written (a large
 * export file: `bytes` is its size, sent as Content-Length).
 */
export type BinaryResult = { binary: Uint8Array | { chunks: AsyncIterable<Uint8Array>; bytes: number }; headers: Record<string, string> };

/** A result with the status it is answered with (the route's, or an error's). */
export type WithStatus<Result extends RouteResult> = Result & { status: number };

/**
 * How a bridge reads one multipart body: the route's `UploadSpec` resolved for the caller. The
 * body is refused with 413 `tooLargeCode` as soon as the file part passes `maxFileBytes`.
 */
export type ReadMultipartOptions = {
  /** Largest file part in bytes; one byte more -> 413 `tooLargeCode` while the body streams. */
  maxFileBytes: number;
  tooLargeCode: 'document_too_large' | 'payload_too_large';
  /** Names of the text fields allowed besides `file`. */
  fields: readonly string[];
};

/** A `multipart/form-data` body: its one file part and its text fields. */
export type ParsedUpload = { file: FileUpload | null; fields: Record<string, string> };

/**
 * How a multipart route reads its body (after authentication, so the caller's limits apply):
 * one file part named `file`, at most `fields` text fields, the file refused with 413 `tooLargeCode`
 * as soon as the stream passes `maxFileBytes(caller)`.
 */
export type UploadSpec = {
  maxFileBytes: (caller: Caller) => number;
  tooLargeCode: 'document_too_large' | 'payload_too_large';
  /** Names of the text fields allowed besides `file`. */
  fields: readonly string[];
  /** The form, for OpenAPI (`multipart/form-data`). */
  form: z.ZodType;
};

/**
 * One endpoint: a contract entry (`@memory-agents/core/contract`) bound to its `MemoryService`
 * call. The table of these is the only place routes exist: dispatch, the Node listener and the
 * OpenAPI document all read it.
 */
export type Route = {
  /** The contract entry this route serves. */
  operation: Operation;
  method: HttpMethod;
  /** Path template with `{name}` segments, e.g. `/v1/agents/{agent_id}`. */
  path: string;
  operationId: string;
  summary: string;
  /** The route group, for OpenAPI. */
  tag: RouteTag;
  /** Success status. */
  status: number;
  /** Request body schema (JSON), for validation by the service and for OpenAPI. */
  body?: z.ZodType;
  /** Set on `multipart/form-data` routes instead of `body`. */
  upload?: UploadSpec;
  /** Query schema, for OpenAPI (the service validates). */
  query?: z.ZodType;
  /**
   * True when the service answers a query its schema refuses (an unknown parameter, a malformed
   * value) with 422, as it does bodies; for OpenAPI.
   */
  queryValidates?: boolean;
  /** Success body schema, for OpenAPI (for a stream: the schema of its final `done` event). */
  response: z.ZodType;
  /** True when the success response is `text/event-stream`. */
  streams?: boolean;
  /** True when the success response is raw bytes of a stored media type (not JSON). */
  binary?: boolean;
  /** Headers the operation reads besides `Authorization`, for OpenAPI. */
  headers?: readonly ('X-SP-End-User' | 'Idempotency-Key')[];
  /** The operation's own error codes (see `Operation.codes`). */
  codes: readonly ErrorCode[];
  /**
   * The request-rate window the route spends from (spec "Limits / Request rates"): counted after
   * authentication and before the body is read; a refused request (429) does no work. Routes
   * without one carry unmetered `X-RateLimit-*` headers.
   */
  rateLimit?: RateLimitedOperation;
  handler: (input: RouteInput) => Promise<RouteResult>;
};

/**
 * Binds a contract entry to its service call, so route files read as a table of handlers. The
 * handler's `params` has exactly the names of the path template (`params.agent_id` on
 * `/v1/agents/{agent_id}`, a compile error for any other name) and `body` is the input type of
 * the entry's body schema: no casts.
 */
export function route<const O extends Operation>(operation: O, handler: (input: RouteInput<O>) => Promise<RouteResult>): Route {
  const headers = [...(operation.endUser ? (['X-SP-End-User'] as const) : []), ...(operation.idempotent ? (['Idempotency-Key'] as const) : [])];
  const upload = operation.upload;
  return {
    operation,
    method: operation.method,
    path: operation.path,
    operationId: operation.operationId,
    summary: operation.summary,
    tag: operation.tag,
    status: operation.status,
    ...(operation.body ? { body: operation.body } : {}),
    ...(upload
      ? { upload: { maxFileBytes: (caller: Caller) => caller.limits[upload.limit], tooLargeCode: upload.tooLargeCode, fields: upload.fields, form: upload.form } }
      : {}),
    ...(operation.query ? { query: operation.query } : {}),
    ...(operation.queryValidates ? { queryValidates: true } : {}),
    response: operation.output,
    ...(operation.response === 'stream' ? { streams: true } : {}),
    ...(operation.response === 'binary' ? { binary: true } : {}),
    ...(headers.length > 0 ? { headers } : {}),
    codes: operation.codes,
    ...(operation.rateLimit ? { rateLimit: operation.rateLimit } : {}),
    // Sound because the router builds `params` from the same template (one entry per `{name}`)
    // and the core validates the body the handler passes on.
    handler: handler as (input: RouteInput) => Promise<RouteResult>,
  };
}
