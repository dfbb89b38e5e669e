import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createMemoryService, defaultMemoryWriter, inMemoryStore, type BlobStore, type MemoryServiceOptions, type MemoryWriter, type Ocr } from '@memory-agents/core';
import { documentConverter } from '@memory-agents/documents';
import { createHandler } from '@memory-agents/http';
import { hasShared, sharedPath } from '../support/shared-data.js';
import { client, readyAgent, type ApiResponse, type Client } from '../support/client.js';

/** The shared real documents (`../shared/fixtures/docs/`, used in place; absent in a clone). */
export const FIXTURES = sharedPath('fixtures/docs/');
/** Whether the shared real documents are beside the repository (see `hasShared`). */
export const SHARED_DOCS = hasShared('fixtures/docs', 'tests on the shared real documents');
/** The files of `../shared/fixtures/docs/` the tests read. */
export const SHARED_DOC_NAMES: ReadonlySet<string> = new Set(['TAMReview.pdf', 'bug1020226.pdf', 'empty_protected.pdf', 'invalid.pdf', 'issue6010_1.pdf', 'linn.pdf', 'tables.docx', 'tracemonkey.pdf', 'wikipedia-source.html']);
export const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(`${FIXTURES}${name}`));

/** Paths of one thread's document endpoints. */
export function documentPaths(agentId: string, threadId: string) {
  const thread = `/v1/agents/${agentId}/threads/${threadId}`;
  return {
    observeFile: `${thread}/observe-file`,
    sources: `${thread}/sources`,
    finish: (sourceId: string) => `${thread}/sources/${sourceId}/finish-learning`,
    status: (observationId: string) => `${thread}/observe/${observationId}/status`,
    chat: `${thread}/chat`,
    original: (sourceId: string) => `/v1/agents/${agentId}/sources/${sourceId}`,
  };
}

/** Sends a multipart form: `file` (bytes + filename) and text fields. */
export async function postForm(
  baseUrl: string,
  key: string,
  path: string,
  file: { data: Uint8Array; filename: string; type?: string } | null,
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
  options: { ownConnection?: boolean } = {},
): Promise<ApiResponse> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', new Blob([file.data], { type: file.type ?? 'application/octet-stream' }), file.filename);
  if (options.ownConnection) return postOnOwnConnection(`${baseUrl}${path}`, { authorization: `Bearer ${key}`, ...headers }, new Response(form));
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

/** Upload windows wide enough for a test file's many uploads (the spec's 1 per 10 s is tested on its own). */
export const GENEROUS_UPLOAD_RATES = Object.fromEntries(
  ['thread_create', 'observe', 'observe_respond', 'chat', 'observe_file', 'image_upload'].map((operation) => [
    operation,
    { subject: { limit: 10_000, windowSeconds: 10 }, organization: { limit: 10_000, windowSeconds: 10 } },
  ]),
);

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Sends an encoded form on a connection of its own, closed after the answer (node:http, no
 * keep-alive): long uploads then never leave a pooled connection behind for the next call.
 */
async function postOnOwnConnection(url: string, headers: Record<string, string>, encoded: Response): Promise<ApiResponse> {
  const body = Buffer.from(await encoded.arrayBuffer());
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { ...headers, connection: 'close', 'content-type': encoded.headers.get('content-type')!, 'content-length': body.length } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        let parsed: unknown;
        try {
          parsed = text === '' ? undefined : JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export type InProcess = {
  url: string;
  key: string;
  api: Client;
  service: ReturnType<typeof createMemoryService>;
  close(): Promise<void>;
};

/**
 * The service mounted with `createHandler` on a loopback port, on in-memory ports unless
 * overridden: for failure paths a real server cannot produce (failing blobs, OCR, budgets). It reads
 * documents with `@memory-agents/documents`, as the server does.
 */
export async function startInProcess(options: Partial<MemoryServiceOptions> = {}, limits: Record<string, unknown> = {}): Promise<InProcess> {
  const service = createMemoryService({ store: inMemoryStore(), logger: SILENT, documentConverter: documentConverter(), ...options });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'docs', limits: { rateLimits: GENEROUS_UPLOAD_RATES, ...limits } as never });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const server: Server = createServer(createHandler(service, { logger: SILENT }));
  // Conversion runs in this process and blocks its event loop for seconds: a short keep-alive would let
  // the server close a pooled socket the client (same loop) has not yet seen closed.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    key,
    api: client(url, key),
    service,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.stop();
    },
  };
}

/**
 * A memory writer around the default one that tests can hold (every batch waits until released)
 * and make fail for chosen turn texts, to produce running, partial and failed uploads.
 */
export function controllableWriter(inner: MemoryWriter = defaultMemoryWriter()) {
  let gate: Promise<void> | null = null;
  let open: (() => void) | null = null;
  let failing: (text: string) => boolean = () => false;
  const writer: MemoryWriter = {
    specificationVersion: 'v1',
    id: 'controllable-writer',
    async write(request) {
      if (gate) await gate;
      const result = await inner.write(request);
      return {
        ...result,
        outcomes: result.outcomes.map((outcome) => {
          const turn = request.turns.find((t) => t.turnIndex === outcome.turnIndex);
          return turn && failing(turn.text) ? { turnIndex: outcome.turnIndex, ok: false as const, reason: 'generation_failed', message: 'test failure' } : outcome;
        }),
      };
    },
  };
  return {
    writer,
    /** Makes every following batch wait until `release()`. */
    hold() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release() {
      open?.();
      gate = null;
      open = null;
    },
    failWhen(predicate: (text: string) => boolean) {
      failing = predicate;
    },
  };
}

/** An OCR port answering instantly with fixed text, or failing, or waiting for `release()`. */
export function fakeOcr(options: { text?: string; fail?: boolean } = {}) {
  let gate: Promise<void> | null = null;
  let open: (() => void) | null = null;
  const calls: number[] = [];
  const ocr: Ocr = {
    specificationVersion: 'v1',
    id: 'fake-ocr',
    async recognize() {
      calls.push(Date.now());
      if (gate) await gate;
      if (options.fail) throw new Error('engine crashed');
      return { text: options.text ?? 'The quick brown fox reads a scanned page about lighthouses.', confidence: 90 };
    },
  };
  return {
    ocr,
    calls,
    hold() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release() {
      open?.();
      gate = null;
    },
  };
}

/** A BlobStore whose writes (and optionally reads) fail, as when the storage is down. */
export function failingBlobs(): BlobStore {
  return {
    specificationVersion: 'v1',
    id: 'failing-blobs',
    async put() {
      throw new Error('disk full');
    },
    async get() {
      return null;
    },
    async delete() {},
    async deletePrefix() {},
  };
}

/** Creates a ready agent and a thread; resolves their ids and paths. */
export async function agentWithThread(api: Client, headers: Record<string, string> = {}) {
  const agent = await readyAgent(api);
  const created = await api.post(`/v1/agents/${agent.agent_id}/threads`, {}, { headers });
  if (created.status !== 201) throw new Error(`thread: ${created.status} ${created.text}`);
  const threadId: string = created.body.thread_id;
  return { agentId: agent.agent_id as string, threadId, paths: documentPaths(agent.agent_id, threadId) };
}

/** Polls an observation status until final (bounded tries, never a wall-clock assertion). */
export async function settle(
  api: Client,
  path: string,
  headers: Record<string, string> = {},
  done: (status: any) => boolean = (s) => ['committed', 'failed', 'cancelled'].includes(s.status),
  intervalMs = 20,
) {
  for (let attempt = 0; attempt < 3000; attempt++) {
    const response = await api.get(path, { headers });
    if (response.status !== 200) throw new Error(`status ${path}: ${response.status} ${response.text}`);
    if (done(response.body)) return response.body;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`gave up polling ${path}`);
}
