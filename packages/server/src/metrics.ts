import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MemoryIndex, Store, TelemetryObserver } from '@memory-agents/core';
import { sendErrorJson, type RequestMeasurement } from '@memory-agents/http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { bearerToken } from './bearer.js';

/** Where the metrics come from at scrape time (the state the server composed). */
export type MetricsSources = {
  store: Store;
  index: MemoryIndex;
};

/** The Prometheus side of `serve --metrics`: what the handler and the service report, and `/metrics`. */
export type ServiceMetrics = {
  registry: Registry;
  /** `createHandler({ onRequest })`. */
  onRequest(request: RequestMeasurement): void;
  /** `createMemoryService({ telemetry })`. */
  telemetry: TelemetryObserver;
  /** Answers `GET /metrics` (the exposition format); with `token`, only to `Authorization: Bearer <token>`. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
};

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Prometheus metrics through prom-client, in a registry of their own (nothing global): request
 * latency per route template and status, the learning queue (depth, oldest queued job's age), turns
 * learned, memories in the index (the whole store, not per agent: no tenant ids in labels), credits
 * charged and refunded, model call latency and errors, and Node's process metrics. Queue and index
 * gauges are read from the store when scraped.
 */
export function createServiceMetrics(options: { token?: string; sources?: () => MetricsSources | null } = {}): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'memory_agents_' });
  const requests = new Histogram({
    name: 'memory_agents_http_request_duration_seconds',
    help: 'Time to the answer of an HTTP request (headers; an event stream body is not counted), by route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  const modelCalls = new Histogram({
    name: 'memory_agents_model_call_duration_seconds',
    help: 'Duration of model port calls (language model generate/stream, embedder embed).',
    labelNames: ['port', 'operation', 'outcome'] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  const modelErrors = new Counter({
    name: 'memory_agents_model_call_errors_total',
    help: 'Model port calls that failed.',
    labelNames: ['port', 'operation'] as const,
    registers: [registry],
  });
  const turnsLearned = new Counter({ name: 'memory_agents_turns_learned_total', help: 'Turns committed to memory by learning jobs.', registers: [registry] });
  const credits = new Counter({
    name: 'memory_agents_credits_total',
    help: 'Credits charged (learning input, answers) and refunded, over every organization.',
    labelNames: ['direction'] as const,
    registers: [registry],
  });
  const gauges = async () => {
    const sources = options.sources?.();
    if (!sources) return null;
    const now = Date.now();
    let depth = 0;
    let oldest = 0;
    for (const organization of await sources.store.organizations.list()) {
      for (const job of await sources.store.jobs.listUnfinished({ organizationId: organization.id })) {
        if (job.status !== 'queued') continue;
        depth++;
        oldest = Math.max(oldest, (now - Date.parse(job.createdAt)) / 1000);
      }
    }
    const memories = sources.index.count ? await sources.index.count() : null;
    return { depth, oldest, memories };
  };
  // One read of the store per scrape, shared by the gauges below.
  let reading: Promise<Awaited<ReturnType<typeof gauges>>> | null = null;
  const read = () => (reading ??= gauges().finally(() => setTimeout(() => (reading = null), 0)));
  new Gauge({
    name: 'memory_agents_learning_queue_depth',
    help: 'Learning jobs queued (not yet started), over every organization.',
    registers: [registry],
    async collect() {
      const found = await read();
      if (found) this.set(found.depth);
    },
  });
  new Gauge({
    name: 'memory_agents_learning_queue_oldest_age_seconds',
    help: 'Age of the oldest queued learning job (0 when none waits).',
    registers: [registry],
    async collect() {
      const found = await read();
      if (found) this.set(found.oldest);
    },
  });
  new Gauge({
    name: 'memory_agents_index_memories',
    help: 'Memories in the memory index, every agent of every organization.',
    registers: [registry],
    async collect() {
      const found = await read();
      if (found && found.memories !== null) this.set(found.memories);
    },
  });

  const expected = options.token === undefined ? null : Buffer.from(options.token);
  return {
    registry,
    onRequest({ method, route, status, durationMs }) {
      requests.observe({ method, route, status: String(status) }, durationMs / 1000);
    },
    telemetry(event) {
      switch (event.kind) {
        case 'model_call':
          modelCalls.observe({ port: event.port, operation: event.operation, outcome: event.ok ? 'ok' : 'error' }, event.durationMs / 1000);
          if (!event.ok) modelErrors.inc({ port: event.port, operation: event.operation });
          break;
        case 'turns_learned':
          turnsLearned.inc(event.turns);
          break;
        case 'credits':
          credits.inc({ direction: event.direction }, event.credits);
          break;
      }
    },
    async handle(request, response) {
      if (expected) {
        // Any case of the scheme (RFC 9110); the token itself compared exactly, in constant time.
        const given = Buffer.from(bearerToken(request.headers.authorization) ?? '');
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
          sendErrorJson(response, 401, 'unauthorized', 'The metrics need Authorization: Bearer <the --metrics-token value>.', { 'WWW-Authenticate': 'Bearer' });
          return;
        }
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        sendErrorJson(response, 405, 'method_not_allowed', `${request.method ?? ''} is not allowed on /metrics; use GET.`, { Allow: 'GET, HEAD' });
        return;
      }
      try {
        const text = await registry.metrics();
        response.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      } catch {
        sendErrorJson(response, 503, 'service_unavailable', 'The metrics could not be read from the database; try again.');
      }
    },
  };
}
