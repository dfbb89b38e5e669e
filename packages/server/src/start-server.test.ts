import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, ROUTES } from '@memory-agents/http';
import { startingResponse } from './start-server.js';

/** The 503 answered while the state opens, checked against the OpenAPI document (issue 29). */
let server: Server;
let url = '';
beforeAll(async () => {
  server = createServer((_request, response) => startingResponse(response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

type Header = { required?: boolean; schema: { type: string; minimum?: number } };
type Document = { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, { $ref?: string } & Partial<Header>> }> }>>; components: { headers: Record<string, Header> } };

describe('startingResponse', () => {
  it('carries every header the OpenAPI document marks required on a 503, with the spec error body', async () => {
    const document = buildOpenApiDocument(ROUTES) as unknown as Document;
    const response = await fetch(`${url}/v1/session`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.code).toBe('service_unavailable');
    expect(typeof body.error).toBe('string');
    expect(body.request_id).toBe(response.headers.get('x-request-id'));
    let checked = 0;
    for (const operations of Object.values(document.paths)) {
      for (const operation of Object.values(operations)) {
        const headers = operation.responses['503']?.headers ?? {};
        for (const [name, entry] of Object.entries(headers)) {
          const header = entry.$ref ? document.components.headers[entry.$ref.split('/').pop()!]! : (entry as Header);
          if (!header.required) continue;
          const value = response.headers.get(name);
          expect(value, name).not.toBeNull();
          if (header.schema.type === 'integer') {
            expect(value, name).toMatch(/^\d+$/);
            expect(Number(value)).toBeGreaterThanOrEqual(header.schema.minimum ?? 0);
          }
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(response.headers.get('x-ratelimit-limit')).not.toBeNull();
  });
});
