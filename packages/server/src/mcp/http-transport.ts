import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isServiceError, ServiceError, type Logger, type MemoryService } from '@memory-agents/core';
import { createClient } from '@memory-agents/client';
import { createFetchHandler } from '@memory-agents/http';
import { bearerToken } from '../bearer.js';
import { createMemoryMcpServer } from './memory-mcp-server.js';

/** Options of `createMcpHttpHandler`. */
export type McpHttpHandlerOptions = {
  logger: Logger;
  /** The server's own URL, for absolute citation links. */
  publicUrl: () => string;
  version: string;
  /** A session unused this long is closed. @default 1800000 (30 minutes) */
  idleTimeoutMs?: number;
  /** Most open sessions; past it the least recently used one is closed. @default 1000 */
  maxSessions?: number;
};

/** `key`: the bearer token that opened it (the scheme's case does not matter, RFC 9110). */
type Session = { transport: StreamableHTTPServerTransport; key: string; endUser: string | undefined; lastUsed: number };

/**
 * The MCP Streamable HTTP endpoint of `serve` (`/mcp`). Every request authenticates its bearer
 * key like `/v1` does (401 otherwise; while the database does not respond, 503, except on a
 * session the same key opened, whose tool calls then answer a tool error); a session belongs to the key (and `X-SP-End-User`) that
 * opened it. The tools call the `/v1` handler in process through the typed client with the
 * caller's own key: the very same authentication, tenancy, rate windows and credits as `/v1`,
 * without a socket. `?agent=` and `?thread=` on the URL set the session's default agent and thread.
 */
export function createMcpHttpHandler(service: MemoryService, options: McpHttpHandlerOptions) {
  const api = createFetchHandler(service, { logger: options.logger });
  const inProcessFetch: typeof fetch = async (input, init) => api(new Request(input, init));
  const sessions = new Map<string, Session>();
  const idleTimeoutMs = options.idleTimeoutMs ?? 30 * 60_000;
  const maxSessions = options.maxSessions ?? 1000;

  const closeSession = (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    void session.transport.close().catch(() => undefined);
  };
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, session] of sessions) if (now - session.lastUsed > idleTimeoutMs) closeSession(id);
  }, 60_000);
  sweeper.unref();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const authorization = request.headers.authorization;
    const key = bearerToken(authorization);
    const endUser = header(request, 'x-sp-end-user');
    const sessionId = header(request, 'mcp-session-id');
    try {
      await service.authenticate({ authorization, endUser, secFetchSite: header(request, 'sec-fetch-site'), requestId: `req_${randomUUID().replaceAll('-', '')}` });
    } catch (error) {
      // The database did not respond: a session this very key (and end user) opened goes on, so
      // its tool calls answer the 503 as a tool error (each of them authenticates through `/v1`
      // again); a request that opens no such session gets the 503 itself.
      const open = sessionId === undefined ? undefined : sessions.get(sessionId);
      const unavailable = isServiceError(error) && error.code === 'service_unavailable';
      if (!unavailable || !open || open.key !== key || open.endUser !== endUser) return writeError(response, error);
    }
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      // A session opened by another key (or for another end user) is not revealed: 404 as if unknown.
      if (!session || session.key !== key || session.endUser !== endUser) {
        return writeError(response, new ServiceError('not_found', 'No such MCP session; initialize a new one.'));
      }
      session.lastUsed = Date.now();
      await session.transport.handleRequest(request, response);
      return;
    }
    if (request.method !== 'POST') {
      return writeError(response, new ServiceError('invalid_request', 'Send an MCP initialize request (POST) first; later requests carry its Mcp-Session-Id.', { status: 400 }));
    }
    const url = new URL(request.url ?? '/mcp', 'http://localhost');
    const agentId = url.searchParams.get('agent') ?? undefined;
    const threadId = url.searchParams.get('thread') ?? undefined;
    const client = createClient({
      baseUrl: 'http://memory-agents.internal',
      apiKey: key!,
      fetch: inProcessFetch,
      ...(endUser === undefined ? {} : { endUser }),
    });
    const server = createMemoryMcpServer({
      client,
      version: options.version,
      publicUrl: options.publicUrl(),
      ...(agentId ? { agentId } : {}),
      ...(threadId ? { threadId } : {}),
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        if (sessions.size >= maxSessions) {
          const oldest = [...sessions.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
          if (oldest) closeSession(oldest[0]);
        }
        sessions.set(id, { transport, key: key!, endUser, lastUsed: Date.now() });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      void server.close().catch(() => undefined);
    };
    await server.connect(transport);
    await transport.handleRequest(request, response);
    // An initialize that failed (a non-initialize first message) never opens a session.
    if (transport.sessionId === undefined) await server.close().catch(() => undefined);
  }

  return {
    /** The node:http listener for `/mcp`; never rejects. */
    async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
      try {
        await handle(request, response);
      } catch (error) {
        options.logger.error('MCP request failed', { error: error instanceof Error ? error.message : String(error) });
        if (!response.headersSent) writeError(response, error);
        else if (!response.writableEnded) response.end();
      }
    },
    /** Closes every session (their event streams included). */
    async close(): Promise<void> {
      clearInterval(sweeper);
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((session) => session.transport.close().catch(() => undefined)));
    },
  };
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The `/v1` error body (`{ error, code, request_id }`) with the status of its code. */
function writeError(response: ServerResponse, error: unknown): void {
  const serviceError = isServiceError(error) ? error : new ServiceError('internal_error', 'Internal error.');
  const requestId = `req_${randomUUID().replaceAll('-', '')}`;
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId, 'Cache-Control': 'no-store' };
  if (serviceError.status === 401) headers['WWW-Authenticate'] = 'Bearer';
  if (serviceError.retryAfter !== undefined) headers['Retry-After'] = String(serviceError.retryAfter);
  response.writeHead(serviceError.status, headers);
  response.end(JSON.stringify({ ...serviceError.toJSON(), request_id: requestId }));
}
