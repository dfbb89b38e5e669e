import { ERROR_CODES, schemas, type ErrorCode } from '@memory-agents/core';
import { z } from 'zod';
import packageJson from '../package.json' with { type: 'json' };
import type { Route, RouteTag } from './route.js';

type JsonSchema = Record<string, unknown>;

/** The version of this package, which is the version of the API description it serves. */
export const HTTP_PACKAGE_VERSION: string = packageJson.version;

const TAGS: Record<RouteTag, string> = {
  Session: 'Which organization a key resolves to, and its upload limits.',
  Agents: 'Memory agents: create, read, change, delete, and their activity log.',
  Threads: 'Conversations under an agent.',
  Learning: 'Sending observations to learn and following the jobs that learn them.',
  Chat: 'Answers from memory, with citations; as JSON or as server-sent events.',
  Documents: 'Uploading files to learn, and the stored originals citations link to.',
  Images: 'Images for chat turns.',
  Billing: 'Credit balance and ledger.',
  Memories: 'What an agent knows: its memories with their provenance, why each ranks where it does for a query, deleting one, and erasing everything derived from a source, thread, observation or person (an extension of the spec).',
  Webhooks: 'Signed event deliveries to the organization\'s endpoints (an opt-in extension; polling stays the spec\'s way).',
  Exports: 'An extension: asynchronous export jobs of an agent, downloaded as JSON lines (docs/export-format.md).',
};

/** Codes every authenticated route can answer (spec "Errors any call can return", "X-SP-End-User"). */
const COMMON_CODES: readonly ErrorCode[] = ['invalid_request', 'unauthorized', 'internal_error', 'service_unavailable'];

const header = (description: string, schema: JsonSchema, required = true) => ({ description, required, schema });

const RESPONSE_HEADERS = {
  'X-Request-Id': header('Id of the request, also in every error body as `request_id`; quote it in reports.', { type: 'string' }),
  'X-RateLimit-Limit': header(
    "Requests allowed in the route's window (spec \"Limits\"); routes without a window report 2147483647.",
    { type: 'integer', minimum: 0 },
  ),
  'X-RateLimit-Remaining': header('Requests left in the window.', { type: 'integer', minimum: 0 }),
  'X-RateLimit-Reset': header('When the window resets, as a Unix timestamp in seconds (on a 429: the moment `Retry-After` names).', {
    type: 'integer',
    minimum: 0,
  }),
  'Retry-After': header('Seconds to wait before sending the request again.', { type: 'integer', minimum: 0 }),
} as const;

const REQUEST_HEADERS = {
  'X-SP-End-User': {
    name: 'X-SP-End-User',
    in: 'header',
    required: false,
    description:
      'Acts for one person of the customer: narrows thread reach to the threads that person created and picks the per-subject rate window. 1 to 255 characters, not only whitespace.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
  'Idempotency-Key': {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Marks one intended request: a retry with the same key and body replays the first answer verbatim without doing or billing the work again (on observe also while the agent is still learning it, instead of a 429); the same key with a different body answers 409 `conflict` (observe-file also while the first upload is still being read). Keys are kept 24 hours per organization.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
} as const;

const ref = (kind: 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Response headers of every response, plus `Retry-After` on 429 (always) and 503 (when known). */
function responseHeaders(status: number): Record<string, unknown> {
  const headers: Record<string, unknown> = {
    'X-Request-Id': ref('headers', 'X-Request-Id'),
    'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'),
    'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'),
    'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset'),
  };
  if (status === 429) headers['Retry-After'] = ref('headers', 'Retry-After');
  if (status === 503) headers['Retry-After'] = { ...RESPONSE_HEADERS['Retry-After'], required: false, description: 'Seconds to wait, when the service knows.' };
  return headers;
}

/**
 * Every error code a route can answer, per HTTP status: the route's own `codes`, the codes of
 * every authenticated route, and those its shape implies (a JSON body can be malformed, too
 * large or fail its schema; an upload can fail its form; a request window can be full).
 */
export function routeErrorCodes(route: Route): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  const add = (status: number, code: ErrorCode) => {
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  };
  const implied: ErrorCode[] = [];
  if (route.body) implied.push('payload_too_large');
  if (route.rateLimit) implied.push('rate_limit_exceeded');
  for (const code of [...COMMON_CODES, ...implied, ...route.codes]) add(ERROR_CODES[code].status, code);
  // Schema validation answers 422 (spec "Codes": invalid_request is 400 or 422).
  if (route.body || route.upload || route.queryValidates) add(422, 'invalid_request');
  return new Map([...byStatus.entries()].sort(([a], [b]) => a - b));
}

/**
 * The OpenAPI 3.1 document of the API, generated from the same route table and zod schemas that
 * validate requests. Schemas with a `meta({ id })` become `components.schemas` entries. The
 * document is the same for every request (`servers` is the relative `/`), so it can be cached.
 */
export function buildOpenApiDocument(routes: readonly Route[], info: { version: string } = { version: HTTP_PACKAGE_VERSION }): JsonSchema {
  const components: Record<string, JsonSchema> = {};

  const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const generated = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io }) as JsonSchema;
    const defs = (generated.$defs ?? {}) as Record<string, JsonSchema>;
    for (const [name, definition] of Object.entries(defs)) components[name] ??= rewriteRefs(definition) as JsonSchema;
    const { $schema: _schema, $defs: _defs, ...rest } = generated;
    return rewriteRefs(rest) as JsonSchema;
  };

  const errorRef = toSchema(schemas.errorBody, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters: unknown[] = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    for (const name of route.headers ?? []) parameters.push(ref('parameters', name));
    if (route.query) {
      const query = toSchema(route.query, 'input') as { properties?: Record<string, JsonSchema> };
      for (const [name, schema] of Object.entries(query.properties ?? {})) parameters.push({ name, in: 'query', required: false, schema });
    }
    const responses: Record<string, unknown> = { [route.status]: successResponse(route, toSchema) };
    for (const [status, codes] of routeErrorCodes(route)) {
      responses[status] = {
        description: ['One of these error codes:', ...codes.map((code) => `- \`${code}\`: ${ERROR_CODES[code].message}`)].join('\n'),
        headers: responseHeaders(status),
        content: { 'application/json': { schema: errorRef } },
      };
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      parameters,
      responses,
      security: [{ bearer: [] }],
    };
    if (route.body) operation.requestBody = { required: true, content: { 'application/json': { schema: toSchema(route.body, 'input') } } };
    if (route.upload) operation.requestBody = { required: true, content: { 'multipart/form-data': { schema: toSchema(route.upload.form, 'input') } } };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Memory Agent Service',
      version: info.version,
      summary: 'Memory agents that learn from observations and documents and answer from what they learned, with citations.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'The server that serves this document; every path starts with /v1.' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: components,
      headers: RESPONSE_HEADERS,
      parameters: REQUEST_HEADERS,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: sp_<key_id>_<secret>' } },
    },
  };
}

function successResponse(route: Route, toSchema: (schema: z.ZodType, io: 'input' | 'output') => JsonSchema): Record<string, unknown> {
  const headers = responseHeaders(route.status);
  if (route.status === 204) return { description: route.summary, headers };
  if (route.streams) {
    return {
      description: `${route.summary}. Each server-sent event is one ChatStreamEvent: its \`event:\` line is the name, its \`data:\` line the JSON \`data\`.`,
      headers,
      content: { 'text/event-stream': { schema: toSchema(schemas.chatStreamEvent, 'output') } },
    };
  }
  if (route.binary) {
    return {
      description: `${route.summary}. The bytes as stored; \`Content-Type\` is the stored media type.`,
      headers: {
        ...headers,
        'Content-Disposition': { description: 'inline, with the original filename', required: true, schema: { type: 'string' } },
      },
      content: { '*/*': { schema: toSchema(route.response, 'output') } },
    };
  }
  return { description: route.summary, headers, content: { 'application/json': { schema: toSchema(route.response, 'output') } } };
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof inner === 'string' ? inner.replace('#/$defs/', '#/components/schemas/') : rewriteRefs(inner);
  }
  return out;
}
