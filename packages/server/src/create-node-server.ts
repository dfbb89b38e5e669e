import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { silentLogger, type Logger } from '@memory-agents/core';
import { createClientErrorHandler, rateLimitHeaders, sendErrorJson, unmeteredStatus, type NodeHandler } from '@memory-agents/http';

/**
 * How long and how many connections the node:http server accepts. Every field bounds what a slow
 * or hostile client can hold: a client sending headers or a body at a byte a second is cut off in
 * seconds, not minutes, and never slows other clients.
 */
export type ServerLimits = {
  /**
   * Time to receive the request line and all headers; then 408 with the error body.
   * @default 10000
   */
  headersTimeoutMs?: number;
  /**
   * Time to receive a whole request, body included (processing after the body is not counted).
   * Sized for the largest upload: a 10 MB document at about 90 KB/s.
   * @default 120000
   */
  requestTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection stays open between requests.
   * @default 5000
   */
  keepAliveTimeoutMs?: number;
  /**
   * Open connections at most; further ones are closed at once by Node.
   * @default 1024
   */
  maxConnections?: number;
  /**
   * Slowest body accepted, measured over the whole body once `slowBodyGraceMs` passed: a request
   * whose body arrives slower is cut off (its socket destroyed) without waiting for
   * `requestTimeoutMs`. 0 turns the check off.
   * @default 1024
   */
  minBodyBytesPerSecond?: number;
  /**
   * How long a body may arrive at any rate before `minBodyBytesPerSecond` applies.
   * @default 10000
   */
  slowBodyGraceMs?: number;
};

/** The defaults of {@link ServerLimits}. */
export const DEFAULT_SERVER_LIMITS: Required<ServerLimits> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
  minBodyBytesPerSecond: 1024,
  slowBodyGraceMs: 10_000,
};

/**
 * A node:http server around `handler` with the {@link ServerLimits} applied and Node's own parser
 * errors (400, 408, 431) answered with the spec's error body (`createClientErrorHandler`).
 */
export function createNodeServer(handler: NodeHandler, limits: ServerLimits = {}, logger: Logger = silentLogger): Server {
  const settings = { ...DEFAULT_SERVER_LIMITS, ...limits };
  const server = createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      keepAliveTimeout: settings.keepAliveTimeoutMs,
      // Node checks the two timeouts above on this interval (default 30 s): check every second at
      // most, so a slow client is cut off close to its deadline.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, settings.headersTimeoutMs / 4)),
      // Node answers an HTTP/1.1 request without Host with a bare 400 and no body; it is answered
      // here instead, with the spec's error body (`missingHostResponse`).
      requireHostHeader: false,
    },
    (request, response) => {
      if (request.headers.host === undefined && request.httpVersionMajor === 1 && request.httpVersionMinor >= 1) return missingHostResponse(response);
      return handler(request, response);
    },
  );
  server.keepAliveTimeout = settings.keepAliveTimeoutMs;
  server.maxConnections = settings.maxConnections;
  server.on('clientError', createClientErrorHandler());
  if (settings.minBodyBytesPerSecond > 0) {
    server.on('request', (request: IncomingMessage) => watchBodyRate(request, settings, logger));
  }
  return server;
}

/** Destroys the socket of a request whose body arrives slower than the minimum rate (slowloris). */
function watchBodyRate(request: IncomingMessage, settings: Required<ServerLimits>, logger: Logger): void {
  const socket = request.socket;
  const startedAt = Date.now();
  const startBytes = socket.bytesRead;
  const timer = setInterval(() => {
    if (request.complete || socket.destroyed) return clearInterval(timer);
    const elapsed = Date.now() - startedAt;
    if (elapsed < settings.slowBodyGraceMs) return;
    const rate = ((socket.bytesRead - startBytes) * 1000) / elapsed;
    if (rate >= settings.minBodyBytesPerSecond) return;
    clearInterval(timer);
    logger.debug('request body too slow; connection closed', { bytesPerSecond: Math.round(rate), elapsedMs: elapsed });
    socket.destroy();
  }, Math.min(1000, settings.slowBodyGraceMs));
  timer.unref();
  request.once('close', () => clearInterval(timer));
}

/**
 * 400 `invalid_request` for an HTTP/1.1 request without a `Host` header (RFC 9112 3.2 requires
 * one), with the headers every response carries. The connection closes after it.
 */
function missingHostResponse(response: ServerResponse): void {
  response.shouldKeepAlive = false;
  sendErrorJson(response, 400, 'invalid_request', 'The request has no Host header; HTTP/1.1 requires one (e.g. Host: 127.0.0.1:8787).', rateLimitHeaders(unmeteredStatus(Date.now())));
}
