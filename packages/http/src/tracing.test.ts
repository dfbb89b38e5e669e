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

    // Exactly two traces: the chat request and the refused one, each a root server span.
    const roots = chatSpans.filter((span) => parentOf(span) === undefined);
    expect(roots.map((span) => [span.name, span.kind]).sort()).toEqual([
      ['GET /v1/session', SpanKind.SERVER],
      ['POST /v1/agents/{agent_id}/threads/{thread_id}/chat', SpanKind.SERVER],
    ]);
    const request = roots.find((span) => span.name.startsWith('POST '))!;
    expect(request.attributes).toEqual({ 'http.request.method': 'POST', 'http.route': '/v1/agents/{agent_id}/threads/{thread_id}/chat', 'http.response.status_code': 200 });
    expect(request.status.code).toBe(SpanStatusCode.UNSET);

    // Its children, by name, each an internal span of the same trace, inside the request's time.
    const children = chatSpans.filter((span) => parentOf(span) === spanId(request));
    expect(children.map((span) => span.name).sort()).toEqual(['memory_agents.authenticate', 'memory_agents.model.embed', 'memory_agents.model.generate', 'memory_agents.retrieval.search']);
    expect(chatSpans.filter((span) => span !== request && isUnder(span, request, chatSpans))).toHaveLength(children.length);
    const time = (at: [number, number]) => at[0] * 1e9 + at[1];
    for (const child of children) {
      expect({ name: child.name, kind: child.kind, status: child.status.code, trace: child.spanContext().traceId }).toEqual({ name: child.name, kind: SpanKind.INTERNAL, status: SpanStatusCode.UNSET, trace: request.spanContext().traceId });
      expect(time(child.startTime), child.name).toBeGreaterThanOrEqual(time(request.startTime));
      expect(time(child.endTime), child.name).toBeLessThanOrEqual(time(request.endTime));
    }
    const named = (name: string) => children.find((span) => span.name === name)!;
    expect(named('memory_agents.authenticate').attributes).toEqual({});
    expect(named('memory_agents.retrieval.search').attributes).toEqual({
      'memory_agents.retrieval.limit': 50,
      'memory_agents.retrieval.lexical_hits': expect.any(Number),
      'memory_agents.retrieval.semantic_hits': expect.any(Number),
    });
    expect(Number(named('memory_agents.retrieval.search').attributes['memory_agents.retrieval.semantic_hits'])).toBeGreaterThan(0);
    // The question is embedded once; the answer is generated once; both name their model (not the text).
    expect(named('memory_agents.model.embed').attributes).toEqual({ 'memory_agents.model': expect.stringMatching(/.+/), 'memory_agents.texts': 1 });
    expect(named('memory_agents.model.generate').attributes).toEqual({ 'memory_agents.model': expect.stringMatching(/.+/) });

    // A refused key: a 401 is not a server error (UNSET), and its authentication span says why by code only.
    const refused = roots.find((span) => span.name === 'GET /v1/session')!;
    expect(refused.attributes).toEqual({ 'http.request.method': 'GET', 'http.route': '/v1/session', 'http.response.status_code': 401 });
    expect(refused.status.code).toBe(SpanStatusCode.UNSET);
    const refusedChildren = chatSpans.filter((span) => parentOf(span) === spanId(refused));
    expect(refusedChildren.map((span) => [span.name, span.status.code, span.attributes])).toEqual([['memory_agents.authenticate', SpanStatusCode.ERROR, { 'error.type': 'unauthorized' }]]);

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

    // Each learning job is a child of the request that stored it (same trace), and its model calls are its children.
    const observeRequest = spans.find((span) => span.name === 'POST /v1/agents/{agent_id}/threads/{thread_id}/observe')!;
    const uploadRequest = spans.find((span) => span.name === 'POST /v1/agents/{agent_id}/threads/{thread_id}/observe-file')!;
    expect([observeRequest.kind, uploadRequest.kind, parentOf(observeRequest), parentOf(uploadRequest)]).toEqual([SpanKind.SERVER, SpanKind.SERVER, undefined, undefined]);
    const jobs = spans.filter((span) => span.name === 'memory_agents.learning.job');
    expect(jobs.map((job) => [spans.find((span) => spanId(span) === parentOf(job))?.name, job.attributes, job.status.code, job.spanContext().traceId === spans.find((span) => spanId(span) === parentOf(job))?.spanContext().traceId]).sort()).toEqual([
      [observeRequest.name, { 'memory_agents.job.kind': 'observe', 'memory_agents.job.turns': 1 }, SpanStatusCode.UNSET, true],
      [uploadRequest.name, { 'memory_agents.job.kind': 'document', 'memory_agents.job.turns': 1 }, SpanStatusCode.UNSET, true],
    ]);
    for (const job of jobs) {
      const calls = spans.filter((span) => parentOf(span) === spanId(job));
      expect(calls.map((span) => [span.name, span.attributes])).toEqual([['memory_agents.model.embed', { 'memory_agents.model': expect.stringMatching(/.+/), 'memory_agents.texts': 1 }]]);
    }
    // The conversion runs in the upload request: 47 bytes read into 2 blocks (the heading and the paragraph).
    const conversions = spans.filter((span) => span.name === 'memory_agents.document.convert');
    expect(conversions.map((span) => [parentOf(span), span.attributes, span.status.code])).toEqual([
      [spanId(uploadRequest), { 'memory_agents.document.bytes': 47, 'memory_agents.document.blocks': 2 }, SpanStatusCode.UNSET],
    ]);
    for (const span of spans) {
      const text = JSON.stringify([span.name, span.attributes]);
      for (const word of TENANT_WORDS) expect(text, span.name).not.toContain(word);
    }
  });
});
