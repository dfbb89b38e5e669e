import type { z } from 'zod';
import type { ErrorCode } from '../errors/codes.js';
import type { RateLimitedOperation } from '../ports/limit-overrides.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The OpenAPI tag (route group) of an operation; their descriptions are in the http package's openapi.ts. */
export type OperationTag = 'Session' | 'Agents' | 'Threads' | 'Learning' | 'Chat' | 'Documents' | 'Images' | 'Billing' | 'Memories' | 'Webhooks' | 'Exports';

/**
 * What the success answer is: `json` (the `output` schema), `stream` (server-sent events, `output`
 * is the schema of the final `done` event), `binary` (stored bytes of their own media type) or
 * `empty` (204, no body).
 */
export type ResponseKind = 'json' | 'stream' | 'binary' | 'empty';

/**
 * A `multipart/form-data` operation's body: one file part named `file`, at most `fields` text
 * fields, the file refused with 413 `tooLargeCode` once it passes the caller's `limit`.
 */
export type UploadForm = {
  /** Which of the caller's limits caps the file part. */
  limit: 'maxUploadBytes' | 'maxImageBytes';
  tooLargeCode: 'document_too_large' | 'payload_too_large';
  /** Names of the text fields allowed besides `file`. */
  fields: readonly string[];
  /** The form, for OpenAPI and the client's types. */
  form: z.ZodType;
};

/**
 * One operation of the `/v1` API, written once (issue 40): the HTTP route binds it to its
 * `MemoryService` call, the OpenAPI document and the client are derived from it. Schemas and
 * metadata only, no logic: this module imports zod schemas and types, nothing server-side.
 */
export type Operation<Path extends string = string> = {
  /** The OpenAPI `operationId` (and the key the client's generated types use). */
  operationId: string;
  method: HttpMethod;
  /** Path template with `{name}` segments, e.g. `/v1/agents/{agent_id}`; the names type the route's params. */
  path: Path;
  /** The docs line: OpenAPI `summary`, the client method's description. */
  summary: string;
  tag: OperationTag;
  /** Success status. */
  status: number;
  /** JSON request body (the service validates it: 422 `invalid_request` on a wrong shape). */
  body?: z.ZodType;
  /** Set on `multipart/form-data` operations instead of `body`. */
  upload?: UploadForm;
  /** Query parameters, for OpenAPI and the client (the service reads them). */
  query?: z.ZodType;
  /** True when the service answers a query its schema refuses with 422, as it does bodies. */
  queryValidates?: boolean;
  /** Success body schema (for a stream: its final `done` event; for `empty`: none is sent). */
  output: z.ZodType;
  /** @default 'json' */
  response?: ResponseKind;
  /** True when the operation reads `X-SP-End-User` (acts for one person of the customer); every operation needs an API key. */
  endUser?: boolean;
  /** True when the operation honours `Idempotency-Key`. */
  idempotent?: boolean;
  /**
   * The error codes this operation can answer besides those of every route (`invalid_request`,
   * `unauthorized`, `internal_error`, `service_unavailable`) and those its shape implies (a body's
   * 422 and `payload_too_large`, an upload's 422, a `rateLimit`'s `rate_limit_exceeded`).
   */
  codes: readonly ErrorCode[];
  /** The request-rate window it spends from (spec "Limits / Request rates"). */
  rateLimit?: RateLimitedOperation;
};

/**
 * Declares an operation, keeping its literal path and its schemas' exact types (the route's
 * `params` and `body` and the client's options are typed from them).
 */
export function operation<const Path extends string, const Definition extends Operation<Path>>(definition: Definition & { path: Path }): Definition {
  return definition;
}

/**
 * The names of the `{name}` segments of a path template, as a union:
 * `PathParams<'/v1/agents/{agent_id}/threads/{thread_id}'>` is `'agent_id' | 'thread_id'`.
 */
export type PathParams<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}` ? Name | PathParams<Rest> : never;

/** The JSON body an operation takes, as its schema's input type (`undefined` when it takes none). */
export type OperationBody<O extends Operation> = O extends { body: infer Body extends z.ZodType } ? z.input<Body> : undefined;

/** The success body an operation answers with, as its schema's output type. */
export type OperationOutput<O extends Operation> = z.output<O['output']>;
