import { describe, expect, it } from 'vitest';
import { startTracingFromEnvironment, tracesRequested } from './otel-environment.js';

describe('traces from the OTEL_* environment', () => {
  it('are asked for by an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp, and turned off by none or OTEL_SDK_DISABLED', () => {
    const cases: [Record<string, string>, boolean][] = [
      [{}, false],
      [{ OTEL_SERVICE_NAME: 'x' }, false],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
      [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
      [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
      [{ OTEL_TRACES_EXPORTER: 'console,otlp' }, true],
      [{ OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
      [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
      [{ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, false],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    ];
    for (const [env, requested] of cases) expect({ env, requested: tracesRequested(env) }).toEqual({ env, requested });
  });

  it('start nothing (and warn nothing) when the variables do not ask for traces', async () => {
    const warnings: string[] = [];
    expect(await startTracingFromEnvironment({ OTEL_SERVICE_NAME: 'x' }, (line) => warnings.push(line))).toBeNull();
    expect(warnings).toEqual([]);
  });
});
