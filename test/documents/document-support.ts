import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createMemoryService, inMemoryStore, type MemoryServiceOptions } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { client, type ApiResponse, type Client } from '../support/client.js';

/** The shared real documents (`../shared/fixtures/docs/`, used in place). */
export const FIXTURES = fileURLToPath(new URL('../../../shared/fixtures/docs/', import.meta.url));
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
): Promise<ApiResponse> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', new Blob([file.data], { type: file.type ?? 'application/octet-stream' }), file.filename);
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
export const GENEROUS_UPLOAD_RATES = {
  observe_file: { subject: { limit: 1000, windowSeconds: 10 }, organization: { limit: 1000, windowSeconds: 10 } },
  image_upload: { subject: { limit: 1000, windowSeconds: 60 }, organization: { limit: 1000, windowSeconds: 60 } },
};

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };

export type InProcess = {
  url: string;
  key: string;
  api: Client;
  service: ReturnType<typeof createMemoryService>;
  close(): Promise<void>;
};

/**
 * The service mounted with `createHandler` on a loopback port, on in-memory ports unless
 * overridden: for failure paths a real server cannot produce (failing blobs, OCR, budgets).
 */
export async function startInProcess(options: Partial<MemoryServiceOptions> = {}, limits: Record<string, unknown> = {}): Promise<InProcess> {
  const service = createMemoryService({ store: inMemoryStore(), logger: SILENT, ...options });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'docs', limits: { rateLimits: GENEROUS_UPLOAD_RATES, ...limits } as never });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const server: Server = createServer(createHandler(service, { logger: SILENT }));
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
