import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDataDir, startServerProcess } from '../support/server.js';

// `serve` with nothing but the standard OpenTelemetry environment variables set (no SDK preloaded)
// exports its spans over OTLP/HTTP: a local receiver standing in for a collector gets them.

type OtlpSpan = { name: string; kind: number; attributes: { key: string; value: Record<string, unknown> }[] };
type OtlpExport = { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };

let collector: Server;
let endpoint: string;
const exports: { path: string; contentType: string | undefined; body: OtlpExport }[] = [];

beforeAll(async () => {
  collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exports.push({ path: request.url ?? '', contentType: request.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});
afterAll(async () => {
  collector.closeAllConnections();
  await new Promise((resolve) => collector.close(resolve));
});

describe('serve with the OTEL_* environment variables', () => {
  it('sends the request spans to OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP, /v1/traces), named by OTEL_SERVICE_NAME', async () => {
    const server = await startServerProcess({
      env: { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'memory-agents-under-test', OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    try {
      const response = await fetch(`${server.url}/v1/session`, { headers: { authorization: `Bearer ${server.key}` } });
      expect(response.status).toBe(200);
    } finally {
      // A graceful stop flushes what the batch still holds.
      expect(await server.stop()).toBe(0);
      await removeDataDir(server.dataDir);
    }
    expect(exports.length, server.output()).toBeGreaterThan(0);
    expect(exports.every((sent) => sent.path === '/v1/traces' && sent.contentType?.startsWith('application/json'))).toBe(true);
    const resources = exports.flatMap((sent) => sent.body.resourceSpans);
    const spans = resources.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    const session = spans.find((span) => span.name === 'GET /v1/session');
    expect(session, JSON.stringify(spans.map((span) => span.name))).toBeDefined();
    expect(session!.kind).toBe(2); // SPAN_KIND_SERVER
    expect(session!.attributes).toContainEqual({ key: 'http.response.status_code', value: { intValue: 200 } });
    expect(spans.some((span) => span.name === 'memory_agents.authenticate')).toBe(true);
    const serviceNames = resources.map((resource) => resource.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue);
    expect(new Set(serviceNames)).toEqual(new Set(['memory-agents-under-test']));
  });
});
