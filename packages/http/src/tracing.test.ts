import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createMemoryService, inMemoryStore, silentLogger } from '@memory-agents/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchHandler } from './create-fetch-handler.js';

/**
 * OpenTelemetry through @opentelemetry/api: the application registers an SDK (here the base SDK
 * with an in-memory exporter) and the service's spans appear in it, nested request → children.
 */
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

const TENANT_WORDS = ['Pixel', 'Porto', 'violin', 'lighthouse', 'notes.md'];

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const spanId = (span: ReadableSpan) => span.spanContext().spanId;

/** Whether `span` is (transitively) under `ancestor`. */
function isUnder(span: ReadableSpan, ancestor: ReadableSpan, all: readonly ReadableSpan[]): boolean {
  const byId = new Map(all.map((candidate) => [spanId(candidate), candidate]));
  for (let at: ReadableSpan | undefined = span; at; at = byId.get(parentOf(at) ?? '')) {
    if (parentOf(at) === spanId(ancestor)) return true;
  }
  return false;
}

describe('OpenTelemetry spans (an SDK registered by the application)', () => {
  it('request, authentication, retrieval, model calls, learning jobs and document conversion; parent/child; no tenant text in attributes', { timeout: 60_000 }, async () => {
    const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const api = createFetchHandler(service, { logger: silentLogger });
    const call = async (method: string, path: string, body?: unknown, bearer = key) => {
      const response = await api(
        new Request(`http://host${path}`, {
          method,
          headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };
    const agent = await call('POST', '/v1/agents', { agent_config: { role: 'assistant', objective: 'remember' } });
    for (let tries = 0; (await call('GET', `/v1/agents/${agent.body.agent_id}`)).body.status !== 'ready'; tries++) {
      if (tries > 200) throw new Error('agent never became ready');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const thread = await call('POST', `/v1/agents/${agent.body.agent_id}/threads`, { title: 'traces' });
    const base = `/v1/agents/${agent.body.agent_id}/threads/${thread.body.thread_id}`;
    expect(
      (await call('POST', `${base}/observe`, { observations: [{ content: [{ type: 'text', text: 'I adopted a grey cat called Pixel; my sister lives in Porto and plays violin.' }] }] })).status,
    ).toBe(202);
    const form = new FormData();
    form.append('file', new Blob(['# Notes\n\nThe lighthouse keeper leaves at dawn.\n'], { type: 'text/markdown' }), 'notes.md');
    const upload = await api(new Request(`http://host${base}/observe-file`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form }));
    expect(upload.status).toBe(202);
    await service.idle();
    exporter.reset();
    expect((await call('POST', `${base}/chat`, { turn_id: 't1', message: 'What is the name of my cat?' })).status).toBe(200);
    expect((await call('GET', '/v1/session', undefined, 'sp_not_a_key')).status).toBe(401);
    const chatSpans = exporter.getFinishedSpans();
    await service.stop();

    // The chat request: a server span named by route template, with its children.
    const request = chatSpans.find((span) => span.name === 'POST /v1/agents/{agent_id}/threads/{thread_id}/chat')!;
    expect(request).toBeDefined();
    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.attributes['http.route']).toBe('/v1/agents/{agent_id}/threads/{thread_id}/chat');
    expect(request.attributes['http.response.status_code']).toBe(200);
    expect(parentOf(request)).toBeUndefined();
    const authentication = chatSpans.find((span) => span.name === 'memory_agents.authenticate' && parentOf(span) === spanId(request));
    expect(authentication).toBeDefined();
    const retrieval = chatSpans.filter((span) => span.name === 'memory_agents.retrieval.search' && isUnder(span, request, chatSpans));
    expect(retrieval.length).toBeGreaterThan(0);
    expect(Number(retrieval[0]!.attributes['memory_agents.retrieval.semantic_hits'])).toBeGreaterThan(0);
    expect(chatSpans.some((span) => span.name === 'memory_agents.model.embed' && isUnder(span, request, chatSpans))).toBe(true);
    expect(chatSpans.some((span) => span.name.startsWith('memory_agents.model.') && span.attributes['memory_agents.model'] !== undefined)).toBe(true);

    // A refused key: the authentication span says why by code only.
    const refused = chatSpans.find((span) => span.name === 'GET /v1/session')!;
    expect(refused.attributes['http.response.status_code']).toBe(401);
    const refusedAuthentication = chatSpans.find((span) => span.name === 'memory_agents.authenticate' && parentOf(span) === spanId(refused))!;
    expect(refusedAuthentication.status.code).toBe(SpanStatusCode.ERROR);
    expect(refusedAuthentication.attributes['error.type']).toBe('unauthorized');

    // No tenant text (observation words, file name, the key) in any span name or attribute.
    for (const span of chatSpans) {
      const text = JSON.stringify([span.name, span.attributes]);
      for (const word of [...TENANT_WORDS, key, 'sp_not_a_key']) expect(text, span.name).not.toContain(word);
    }
  });

  it('learning jobs and document conversion have spans of their own, with the model calls under the job', { timeout: 60_000 }, async () => {
    exporter.reset();
    const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const api = createFetchHandler(service, { logger: silentLogger });
    const post = async (path: string, body: unknown) =>
      (await (await api(new Request(`http://host${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }))).json()) as Record<string, string>;
    const agent = await post('/v1/agents', { agent_config: { role: 'assistant', objective: 'remember' } });
    await service.idle();
    const thread = await post(`/v1/agents/${agent.agent_id}/threads`, { title: 'traces' });
    const base = `/v1/agents/${agent.agent_id}/threads/${thread.thread_id}`;
    await post(`${base}/observe`, { observations: [{ content: [{ type: 'text', text: 'My sister lives in Porto.' }] }] });
    const form = new FormData();
    form.append('file', new Blob(['# Notes\n\nThe lighthouse keeper leaves at dawn.\n'], { type: 'text/markdown' }), 'notes.md');
    expect((await api(new Request(`http://host${base}/observe-file`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form }))).status).toBe(202);
    await service.idle();
    await service.stop();
    const spans = exporter.getFinishedSpans();

    const jobs = spans.filter((span) => span.name === 'memory_agents.learning.job');
    expect(jobs.map((span) => span.attributes['memory_agents.job.kind']).sort()).toEqual(['document', 'observe']);
    for (const job of jobs) expect(spans.some((span) => span.name === 'memory_agents.model.embed' && isUnder(span, job, spans))).toBe(true);
    const conversion = spans.find((span) => span.name === 'memory_agents.document.convert')!;
    expect(conversion).toBeDefined();
    expect(Number(conversion.attributes['memory_agents.document.bytes'])).toBeGreaterThan(0);
    expect(Number(conversion.attributes['memory_agents.document.blocks'])).toBeGreaterThan(0);
    for (const span of spans) {
      const text = JSON.stringify([span.name, span.attributes]);
      for (const word of TENANT_WORDS) expect(text, span.name).not.toContain(word);
    }
  });
});
