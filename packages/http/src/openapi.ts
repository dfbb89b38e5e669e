import { ERROR_CODES, schemas } from '@memory-agents/core';
import { z } from 'zod';
import type { Route } from './route.js';

type JsonSchema = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document of the API, generated from the same route table and zod schemas that
 * validate requests. Schemas with a `meta({ id })` become `components.schemas` entries.
 */
export function buildOpenApiDocument(routes: readonly Route[], info: { version: string }): JsonSchema {
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
    for (const header of route.headers ?? []) parameters.push({ name: header, in: 'header', required: false, schema: { type: 'string', maxLength: 255 } });
    if (route.query) {
      const query = toSchema(route.query, 'input') as { properties?: Record<string, JsonSchema> };
      for (const [name, schema] of Object.entries(query.properties ?? {})) parameters.push({ name, in: 'query', required: false, schema });
    }
    const success = route.streams
      ? { 'text/event-stream': { schema: { type: 'string', description: 'events: context, delta, done (data: the schema below), error' } }, 'application/json': { schema: toSchema(route.response, 'output') } }
      : { 'application/json': { schema: toSchema(route.response, 'output') } };
    const responses: Record<string, unknown> = { [route.status]: { description: route.summary, content: success } };
    for (const status of [...route.errors, 401, 503].sort()) {
      const codes = Object.entries(ERROR_CODES)
        .filter(([code, entry]) => entry.status === status || (code === 'invalid_request' && status === 422))
        .map(([code]) => code);
      responses[status] = { description: `Error: ${codes.join(', ')}`, content: { 'application/json': { schema: errorRef } } };
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
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
    info: { title: 'Memory Agent Service', version: info.version },
    paths,
    components: { schemas: components, securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'sp_<key_id>_<secret>' } } },
  };
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
