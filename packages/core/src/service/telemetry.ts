import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { Embedder } from '../ports/embedder.js';
import type { LanguageModel } from '../ports/language-model.js';

/**
 * What the service reports to a telemetry observer (`createMemoryService({ telemetry })`): the
 * server turns these into Prometheus metrics; core itself depends on no metrics library. Events
 * carry counts, durations and outcomes, never tenant text or ids.
 */
export type TelemetryEvent =
  /** One call of a model port: the language model (`generate`, `stream`) or the embedder (`embed`). */
  | { kind: 'model_call'; port: 'language_model' | 'embedder'; operation: 'generate' | 'stream' | 'embed'; durationMs: number; ok: boolean }
  /** Turns a learning job committed to memory (one event per batch). */
  | { kind: 'turns_learned'; turns: number }
  /** Credits charged (a learning batch's input words, an answer's final cost) or refunded, as a number. */
  | { kind: 'credits'; direction: 'charged' | 'refunded'; credits: number };

/** Receives {@link TelemetryEvent}s; called synchronously, so it must be cheap and must not throw. */
export type TelemetryObserver = (event: TelemetryEvent) => void;

/** The observer used when none is given. */
export const noTelemetry: TelemetryObserver = () => undefined;

/**
 * OpenTelemetry tracer of the service. Through `@opentelemetry/api` only: without an SDK
 * registered by the application every span is a no-op.
 */
export const tracer = trace.getTracer('@memory-agents/core');

/**
 * Runs `fn` in an active span `name` (children started inside it nest under it); the span ends
 * when `fn` settles, with an error status and the error's class name (never its message, which
 * may quote tenant text) when it rejects.
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', error instanceof Error ? error.name : typeof error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The language model with a span per call and a `model_call` event (duration, outcome). */
export function observedModel(model: LanguageModel, observe: TelemetryObserver): LanguageModel {
  const report = (operation: 'generate' | 'stream', started: number, ok: boolean) =>
    observe({ kind: 'model_call', port: 'language_model', operation, durationMs: performance.now() - started, ok });
  return {
    specificationVersion: model.specificationVersion,
    get id() {
      return model.id;
    },
    generate(request) {
      const started = performance.now();
      return inSpan('memory_agents.model.generate', { 'memory_agents.model': model.id }, async () => {
        try {
          const result = await model.generate(request);
          report('generate', started, true);
          return result;
        } catch (error) {
          report('generate', started, false);
          throw error;
        }
      });
    },
    async *stream(request) {
      const started = performance.now();
      const span = tracer.startSpan('memory_agents.model.stream', { attributes: { 'memory_agents.model': model.id } });
      let failed = false;
      try {
        // The iterator's finishing value (`{ usage }`, port "LanguageModel") passes through.
        return yield* model.stream(request);
      } catch (error) {
        failed = true;
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', error instanceof Error ? error.name : typeof error);
        throw error;
      } finally {
        // A consumer that stops early (a client gone) is not a model error.
        report('stream', started, !failed);
        span.end();
      }
    },
  };
}

/** The embedder with a span per call and a `model_call` event (duration, outcome). */
export function observedEmbedder(embedder: Embedder, observe: TelemetryObserver): Embedder {
  return {
    specificationVersion: embedder.specificationVersion,
    // Read through: an embedder may change what it reports (getters).
    get id() {
      return embedder.id;
    },
    get dimensions() {
      return embedder.dimensions;
    },
    get meaning() {
      return embedder.meaning;
    },
    embed(request) {
      const started = performance.now();
      return inSpan('memory_agents.model.embed', { 'memory_agents.model': embedder.id, 'memory_agents.texts': request.texts.length }, async () => {
        try {
          const result = await embedder.embed(request);
          observe({ kind: 'model_call', port: 'embedder', operation: 'embed', durationMs: performance.now() - started, ok: true });
          return result;
        } catch (error) {
          observe({ kind: 'model_call', port: 'embedder', operation: 'embed', durationMs: performance.now() - started, ok: false });
          throw error;
        }
      });
    },
  };
}
