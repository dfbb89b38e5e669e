import { sendErrorJson } from '@memory-agents/http';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The inspector's headers. Everything the inspector shows was written by somebody else's end users,
 * and the page holds an API key: no inline script or style, nothing from another origin, no framing,
 * no referrer, no sniffing. Its only network peer is this server's own /v1 API (`connect-src 'self'`).
 */
export const INSPECTOR_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-cache',
};

/** The files of the inspector (built into dist/inspector by tsup), by request path. */
const FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '/inspect': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/inspect/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/inspect/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/inspect/inspector.css': { file: 'inspector.css', type: 'text/css; charset=utf-8' },
  // The page names it (`<link rel="icon">`), so a browser asks for no /favicon.ico (no 404 a load).
  '/inspect/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
};

/**
 * Where the inspector's page calls the API: `/inspect/api/v1/...` is `/v1/...` for a page of this
 * server. The spec refuses a key on a request carrying `Sec-Fetch-Site` (keys belong on a server),
 * and /v1 keeps that rule exactly; this prefix accepts only `Sec-Fetch-Site: same-origin` (the
 * inspector's own page, served with a policy that allows no other script) and passes the request
 * on without the header. A page of another origin can neither read its answers (no CORS headers)
 * nor send it a key it does not have.
 */
export const INSPECTOR_API = '/inspect/api/';

type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void | Promise<void>;

export function inspectorApi(request: IncomingMessage, response: ServerResponse, v1: NodeHandler): void | Promise<void> {
  if (request.headers['sec-fetch-site'] !== 'same-origin') {
    sendErrorJson(response, 403, 'forbidden', "The inspector's API answers the inspector's own page only (Sec-Fetch-Site: same-origin); call /v1 from a server.", INSPECTOR_HEADERS);
    return;
  }
  delete request.headers['sec-fetch-site'];
  request.url = `/${(request.url ?? '').slice(INSPECTOR_API.length)}`;
  return v1(request, response);
}

/** Whether a request path is the inspector's. */
export const isInspectorPath = (path: string): boolean => path === '/inspect' || path.startsWith('/inspect/');

/** Whether `serve` turns the inspector on when no flag says: only when it listens on loopback. */
export function inspectorByDefault(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Serves the inspector's files (page, script, stylesheet, icon) (read once, on the first request) with {@link INSPECTOR_HEADERS};
 * 404 for anything else under /inspect, 405 for methods other than GET and HEAD.
 */
export function createInspectorHandler(directory: URL = new URL('./inspector/', import.meta.url)) {
  const cache = new Map<string, Promise<Buffer>>();
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? '/').split('?')[0]!;
    const entry = FILES[path];
    // Errors from the one error table (code, sentence, request id), with the inspector's headers.
    const json = (status: number, code: 'method_not_allowed' | 'not_found', error: string, headers: Record<string, string> = {}) =>
      void sendErrorJson(response, status, code, error, { ...INSPECTOR_HEADERS, ...headers });
    if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, 'method_not_allowed', 'The inspector answers GET and HEAD only.', { Allow: 'GET, HEAD' });
    if (!entry) return json(404, 'not_found', 'The inspector has no such file.');
    let body = cache.get(entry.file);
    if (!body) {
      body = readFile(new URL(entry.file, directory));
      cache.set(entry.file, body);
    }
    let bytes: Buffer;
    try {
      bytes = await body;
    } catch {
      cache.delete(entry.file);
      return json(404, 'not_found', 'The inspector was not built with this server (run `npm run build`).');
    }
    response.writeHead(200, { ...INSPECTOR_HEADERS, 'Content-Type': entry.type, 'Content-Length': String(bytes.length) });
    response.end(request.method === 'HEAD' ? undefined : bytes);
  };
}
