import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server as NetServer } from 'node:net';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { stderrLogger, type Logger, type MemoryIndex, type MemoryService, type MemoryServiceOptions, type RedactionOptions, type MemoryLifecycleOptions, type Store, type WebhookOptions } from '@memory-agents/core';
import { createHandler, rateLimitHeaders, sendErrorJson, unmeteredStatus, type NodeHandler } from '@memory-agents/http';
import { composeService, dataPaths, type StateLocation } from './compose.js';
import { listenControlSocket } from './control-socket.js';
import { createNodeServer, type ServerLimits } from './create-node-server.js';
import { createInspectorHandler, INSPECTOR_API, inspectorApi, inspectorByDefault, isInspectorPath } from './inspector.js';
import type { ServiceModels } from './model-options.js';
import { createServiceMetrics, type ServiceMetrics } from './metrics.js';

export type StartServerOptions = StateLocation & {
  /** @default 8787 */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
  logger?: Logger;
  /** Model ports replacing the offline defaults (see `createServiceModels`). @default the offline defaults */
  models?: ServiceModels;
  /** Webhooks (`createMemoryService`'s `webhooks`; `serve --webhooks`). @default undefined (off) */
  webhooks?: WebhookOptions;
  /** The operator's own kinds of personal data (`createMemoryService`'s `redaction`; `serve --redact-pattern`). @default none */
  redaction?: RedactionOptions;
  /** Forgotten memories' restore window and sweep (`createMemoryService`'s `memoryLifecycle`; `serve --restore-window-days`). @default 7 days */
  memoryLifecycle?: MemoryLifecycleOptions;
  /** Maintenance on a schedule when an agent is idle (`createMemoryService`'s `maintenance`; `serve --maintenance-idle-minutes`). @default off */
  maintenance?: MemoryServiceOptions['maintenance'];
  /**
   * Timeouts and the connection cap of the HTTP server (see `ServerLimits` for each default):
   * headers 10 s, whole request 120 s, keep-alive 5 s, 1024 connections, bodies slower than
   * 1 KiB/s cut off after 10 s.
   */
  limits?: ServerLimits;
  /** Largest JSON request body in bytes (`createHandler`'s `maxJsonBytes`). @default 33554432 */
  maxJsonBytes?: number;
  /**
   * Serve the inspector at /inspect (a page over /v1 that signs in with an API key).
   * @default true when `host` is a loopback address, false otherwise
   */
  inspector?: boolean;
  /**
   * Prometheus metrics at `/metrics` (off by default): on their own address (`listen`, e.g.
   * `{ host: '127.0.0.1', port: 9464 }`: reachable only where that address is), and/or behind
   * `Authorization: Bearer <token>` (on the API's port when there is no `listen`). One of the two
   * is required: the metrics are never open on the API's port.
   */
  metrics?: { listen?: { host: string; port: number }; token?: string };
};

export type RunningServer = {
  url: string;
  service: MemoryService;
  /** Whether the inspector is served at /inspect. */
  inspector: boolean;
  /** The key minted on an empty data dir (shown once), else null. */
  firstKey: { organizationId: string; key: string; keyId: string } | null;
  /** Where `/metrics` is served (`metrics.listen`, or the API's url with a token), else null. */
  metricsUrl: string | null;
  /** Stops accepting, drains background work and closes the store. Idempotent. */
  close(): Promise<void>;
};

/** Why the server could not start, as one line for a person (`code` names the condition). */
export class StartError extends Error {
  constructor(
    readonly code: 'address_in_use' | 'address_unavailable' | 'listen_failed',
    message: string,
  ) {
    super(message);
    this.name = 'StartError';
  }
}

/**
 * Starts the HTTP server on the embedded default or on PostgreSQL, in an order that never leaves
 * half a server behind: the port is bound first (a port in use fails in milliseconds with a
 * `StartError`, before any state is opened); requests arriving while the state opens are answered
 * 503 `service_unavailable`; then the service starts, the control socket and pid file are written
 * and, on a state with no organization, the first organization and key are created (returned once
 * in `firstKey`): only once the server can be reached. A failure at any step closes what the
 * earlier steps opened.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? stderrLogger;
  const port = options.port ?? 8787;
  const hostname = options.host ?? '127.0.0.1';
  if (options.metrics && !options.metrics.listen && options.metrics.token === undefined) {
    throw new RangeError('metrics need their own address (metrics.listen, --metrics-listen host:port) or a bearer token (metrics.token, --metrics-token)');
  }
  if (options.metrics?.token !== undefined && options.metrics.token.length < 16) {
    throw new RangeError('the metrics token must be at least 16 characters');
  }
  let sources: { store: Store; index: MemoryIndex } | null = null;
  const metrics: ServiceMetrics | null = options.metrics ? createServiceMetrics({ ...(options.metrics.token !== undefined ? { token: options.metrics.token } : {}), sources: () => sources }) : null;
  let metricsServer: Server | null = null;

  let api: NodeHandler | null = null;
  const server: Server = createNodeServer(
    async (request, response) => {
      if (api) return api(request, response);
      // Liveness holds while the state opens (readiness, /readyz, does not yet).
      if ((request.url ?? '').split('?')[0] === '/healthz') return void response.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' }).end('{"status":"ok"}');
      startingResponse(response);
    },
    options.limits,
    logger,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, hostname, port)));
    server.listen(port, hostname, () => resolve());
  });
  const closeHttp = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });

  let composed: Awaited<ReturnType<typeof composeService>> | null = null;
  let control: NetServer | null = null;
  const paths = options.databaseUrl === undefined ? dataPaths(options.dataDir) : null;
  let firstKey: RunningServer['firstKey'] = null;
  try {
    composed = await composeService(options, logger, options.models, { ...(metrics ? { telemetry: metrics.telemetry } : {}), ...(options.webhooks ? { webhooks: options.webhooks } : {}), ...(options.redaction ? { redaction: options.redaction } : {}), ...(options.memoryLifecycle ? { memoryLifecycle: options.memoryLifecycle } : {}), ...(options.maintenance ? { maintenance: options.maintenance } : {}) });
    await composed.service.start();
    sources = { store: composed.store, index: composed.index };
    if (metrics && options.metrics?.listen) {
      const { host: metricsHost, port: metricsPort } = options.metrics.listen;
      const listening: Server = createNodeServer(async (request, response) => {
        if ((request.url ?? '').split('?')[0] === '/metrics') return metrics.handle(request, response);
        sendErrorJson(response, 404, 'not_found', 'Only /metrics is served here.');
      }, options.limits, logger);
      await new Promise<void>((resolve, reject) => {
        listening.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, metricsHost, metricsPort)));
        listening.listen(metricsPort, metricsHost, () => resolve());
      });
      metricsServer = listening;
    }
    if (paths) {
      control = await listenControlSocket(paths.controlSocket, composed.service);
      await writeFile(paths.pidFile, String(process.pid), { mode: 0o600 });
    }
    if ((await composed.service.admin.listOrganizations()).length === 0) {
      const org = await composed.service.admin.createOrganization({ name: 'Default organization' });
      const key = await composed.service.admin.createKey({ organizationId: org.organizationId });
      firstKey = { organizationId: org.organizationId, key: key.key, keyId: key.keyId };
    }
  } catch (error) {
    await closeHttp();
    if (metricsServer) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
    if (control) await new Promise<void>((resolve) => control!.close(() => resolve()));
    await composed?.close().catch(() => undefined);
    await options.models?.close?.();
    // Only files this start wrote: another server's pid file is never touched.
    if (paths && control) await removeServerFiles(paths);
    throw error;
  }
  const service = composed.service;
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  const v1 = createHandler(service, {
    logger,
    ...(options.maxJsonBytes === undefined ? {} : { maxJsonBytes: options.maxJsonBytes }),
    ...(metrics ? { onRequest: metrics.onRequest } : {}),
  });
  // With a token and no address of their own, the metrics answer on the API's port.
  const metricsOnApiPort = metrics && !options.metrics?.listen ? metrics : null;
  let metricsUrl: string | null = null;
  if (metricsServer) {
    const metricsAddress = (metricsServer as Server).address() as AddressInfo;
    metricsUrl = `http://${metricsAddress.family === 'IPv6' ? `[${metricsAddress.address}]` : metricsAddress.address}:${metricsAddress.port}/metrics`;
  } else if (metricsOnApiPort) metricsUrl = `${url}/metrics`;
  // MCP over Streamable HTTP at /mcp, beside /v1: its tools call the /v1 handler in process. The
  // MCP SDK is loaded on the first /mcp request, not with every server.
  const version = await serverVersion();
  let mcp: Promise<{ handle: NodeHandler; close(): Promise<void> }> | null = null;
  const mcpHandler = () =>
    (mcp ??= import('./mcp/http-transport.js').then(({ createMcpHttpHandler }) => createMcpHttpHandler(service, { logger, publicUrl: () => url, version })));
  const inspector = (options.inspector ?? inspectorByDefault(hostname)) ? createInspectorHandler() : null;
  // The one router of the API's port: what it serves beside /v1, the first match answering; every
  // other path goes to /v1's handler (its own 404s and errors come from the one error table).
  const mounts: { matches: (path: string) => boolean; handle: NodeHandler }[] = [
    { matches: (path) => path === '/mcp' || path === '/mcp/', handle: async (request, response) => (await mcpHandler()).handle(request, response) },
    ...(metricsOnApiPort ? [{ matches: (path: string) => path === '/metrics', handle: metricsOnApiPort.handle }] : []),
    ...(inspector
      ? [
          { matches: (path: string) => path.startsWith(INSPECTOR_API), handle: ((request, response) => inspectorApi(request, response, v1)) as NodeHandler },
          { matches: isInspectorPath, handle: inspector },
        ]
      : []),
  ];
  api = (request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    return (mounts.find((mount) => mount.matches(path))?.handle ?? v1)(request, response);
  };

  let closing: Promise<void> | null = null;
  return {
    url,
    service,
    inspector: inspector !== null,
    firstKey,
    metricsUrl,
    close() {
      closing ??= (async () => {
        if (mcp) await (await mcp).close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        if (metricsServer) {
          await new Promise<void>((resolve) => {
            metricsServer!.close(() => resolve());
            metricsServer!.closeAllConnections();
          });
        }
        if (control) await new Promise<void>((resolve) => control!.close(() => resolve()));
        await composed!.close();
        await options.models?.close?.();
        if (paths) await removeServerFiles(paths);
      })();
      return closing;
    },
  };
}

/** The version in this package's package.json (next to src/ and dist/), announced to MCP clients. */
async function serverVersion(): Promise<string> {
  const text = await readFile(new URL('../package.json', import.meta.url), 'utf8').catch(() => '{"version":"0.0.0"}');
  return (JSON.parse(text) as { version: string }).version;
}

/**
 * The answer to a request that arrives while the state is still opening: 503 with the headers
 * every response carries (spec "Limits": the `X-RateLimit-*` of a response outside every window,
 * as the API handler writes them for unmetered routes).
 */
export function startingResponse(response: ServerResponse): void {
  sendErrorJson(response, 503, 'service_unavailable', 'The server is starting; send the request again in a few seconds.', { ...rateLimitHeaders(unmeteredStatus(Date.now())), 'Retry-After': '2' });
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === 'EADDRINUSE') return new StartError('address_in_use', `port ${port} on ${host} is already in use; stop the program holding it or pass --port`);
  if (error.code === 'EADDRNOTAVAIL') return new StartError('address_unavailable', `${host} is not an address of this machine; pass --host`);
  return new StartError('listen_failed', `cannot listen on ${host}:${port}: ${error.message}`);
}

async function removeServerFiles(paths: ReturnType<typeof dataPaths>): Promise<void> {
  // On storage that turned read-only (or fails) they cannot be removed; the next start finds a
  // pid file of a process that is gone and takes the data dir over, so shutting down goes on.
  await rm(paths.controlSocket, { force: true }).catch(() => undefined);
  await rm(paths.pidFile, { force: true }).catch(() => undefined);
}
