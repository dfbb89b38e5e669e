import { ProxyTracerProvider, trace } from '@opentelemetry/api';

/** What `startTracingFromEnvironment` started: flush and stop it on shutdown. */
export type EnvironmentTracing = { exporter: string; shutdown(): Promise<void> };

type Env = Record<string, string | undefined>;
type Warn = (line: string) => void;

/**
 * Whether the standard OpenTelemetry variables ask for trace export: `OTEL_TRACES_EXPORTER`
 * naming `otlp`, or an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) with no exporter named (the SDK's default is `otlp`).
 * `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn it off.
 */
export function tracesRequested(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  if (exporters.includes('none')) return false;
  if (exporters.length > 0) return exporters.includes('otlp');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts an OpenTelemetry trace pipeline from the standard `OTEL_*` environment variables (the
 * convention every OpenTelemetry SDK follows), for `serve`: a `NodeTracerProvider` with a batch
 * processor and the OTLP/HTTP exporter, which reads the endpoint, headers, timeout and
 * `OTEL_BSP_*` settings from the environment itself; the resource takes `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` (service name `memory-agents` otherwise).
 *
 * Null, and nothing loaded, when the variables do not ask for traces (the default start stays
 * cheap: the SDK packages are imported only here), when an SDK is already registered (e.g.
 * preloaded with `node --import`; it is used as is), or when the optional SDK packages are not
 * installed (one warning line says which).
 */
export async function startTracingFromEnvironment(env: Env, warn: Warn): Promise<EnvironmentTracing | null> {
  if (!tracesRequested(env)) return null;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol === 'grpc') {
    warn('memory-agents: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported; traces are sent as OTLP/HTTP (JSON) to the same endpoint, so point it at the collector\'s HTTP port (4318) or set http/json\n');
  }
  let sdk: typeof import('@opentelemetry/sdk-trace-node');
  let otlp: typeof import('@opentelemetry/exporter-trace-otlp-http');
  let resources: typeof import('@opentelemetry/resources');
  try {
    [sdk, otlp, resources] = await Promise.all([import('@opentelemetry/sdk-trace-node'), import('@opentelemetry/exporter-trace-otlp-http'), import('@opentelemetry/resources')]);
  } catch (error) {
    warn(
      `memory-agents: OTEL_* asks for traces, but the OpenTelemetry SDK is not installed (${(error as Error).message.split('\n')[0]}); ` +
        'install @opentelemetry/sdk-trace-node, @opentelemetry/exporter-trace-otlp-http and @opentelemetry/resources (optional dependencies of @memory-agents/server) to send them\n',
    );
    return null;
  }
  const detected = resources.detectResources({ detectors: [resources.envDetector] });
  const named = env.OTEL_SERVICE_NAME?.trim() || /(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '') ? detected : resources.resourceFromAttributes({ 'service.name': 'memory-agents' }).merge(detected);
  const provider = new sdk.NodeTracerProvider({
    resource: resources.defaultResource().merge(named),
    spanProcessors: [new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter())],
  });
  // The global provider, the async context manager and the W3C propagators. An SDK registered
  // before (preloaded) keeps all three: registration does not replace them, and ours is let go.
  provider.register();
  const active = trace.getTracerProvider();
  if (!(active instanceof ProxyTracerProvider && active.getDelegate() === provider)) {
    await provider.shutdown();
    return null;
  }
  return {
    exporter: `OTLP/HTTP to ${env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || `${env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || 'http://localhost:4318'}`}`,
    shutdown: () => provider.shutdown(),
  };
}
