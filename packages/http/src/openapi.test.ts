import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '@memory-agents/core';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, HTTP_PACKAGE_VERSION, routeErrorCodes } from './openapi.js';
import { ROUTES } from './routes/index.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

type Operation = {
  tags: string[];
  parameters: { $ref?: string; name?: string }[];
  responses: Record<string, { description: string; headers: Record<string, { $ref?: string }>; content?: Record<string, { schema: unknown }> }>;
};
type Document = {
  info: { version: string; license: { identifier: string } };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { oneOf?: { $ref: string }[] }> };
};
const document = buildOpenApiDocument(ROUTES) as unknown as Document;
const operation = (path: string, method: string) => document.paths[path]![method]!;
const THREAD = '/v1/agents/{agent_id}/threads/{thread_id}';

/** Runs the pinned @redocly/cli on a file, with the repository's redocly.yaml. */
function redoclyLint(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const require = createRequire(import.meta.url);
  const packageFile = require.resolve('@redocly/cli/package.json');
  const bin = (JSON.parse(readFileSync(packageFile, 'utf8')) as { bin: Record<string, string> }).bin.redocly!;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(dirname(packageFile), bin), 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'],
      { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('buildOpenApiDocument', () => {
  it('passes redocly lint with no error and no warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ma-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(document));
      const result = await redoclyLint(file);
      const output = `${result.stdout}\n${result.stderr}`;
      expect(result.code, output).toBe(0);
      const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
      expect(report.problems, output).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads info.version from packages/http/package.json and names the license and a relative server', async () => {
    const packageJson = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(HTTP_PACKAGE_VERSION).toBe(packageJson.version);
    expect(document.info.version).toBe(packageJson.version);
    expect(document.info.license.identifier).toBe('Apache-2.0');
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(JSON.stringify(buildOpenApiDocument(ROUTES))).toBe(JSON.stringify(document));
  });

  it('tags every operation with a declared tag', () => {
    const declared = new Set(document.tags.map((tag) => tag.name));
    for (const methods of Object.values(document.paths)) {
      for (const op of Object.values(methods)) for (const tag of op.tags) expect(declared).toContain(tag);
    }
    expect(operation(`${THREAD}/chat`, 'post').tags).toEqual(['Chat']);
    expect(operation('/v1/agents', 'post').tags).toEqual(['Agents']);
  });

  it('lists per status only the codes the route can answer', () => {
    const createAgent = operation('/v1/agents', 'post').responses;
    expect(createAgent['409']!.description).toContain('agent_quota_exceeded');
    expect(createAgent['409']!.description).not.toContain('agent_not_ready');
    expect(createAgent['404']!.description).toContain('agent_not_found');
    expect(createAgent['404']!.description).not.toContain('thread_not_found');
    expect(createAgent['422']!.description).toContain('invalid_request');
    expect(createAgent['429']).toBeUndefined();
    const session = operation('/v1/session', 'get').responses;
    expect(Object.keys(session).sort()).toEqual(['200', '400', '401', '500', '503']);
    expect(session['503']!.description).toContain('service_unavailable');
    expect(session['503']!.description).not.toContain('ocr_busy');
    const chat = operation(`${THREAD}/chat`, 'post').responses;
    expect(chat['402']!.description).toContain('payment_required');
    expect(chat['429']!.description).toContain('rate_limit_exceeded');
    expect(chat['503']!.description).toContain('answer_model_unavailable');
    const upload = operation(`${THREAD}/observe-file`, 'post').responses;
    expect(upload['400']!.description).toContain('unsupported_document');
    expect(upload['413']!.description).toContain('document_too_large');
    expect(upload['413']!.description).not.toContain('payload_too_large');
  });

  it('documents each code under the status of the code table', () => {
    for (const route of ROUTES) {
      for (const [status, codes] of routeErrorCodes(route)) {
        for (const code of codes) expect(status === ERROR_CODES[code].status || (code === 'invalid_request' && status === 422)).toBe(true);
      }
    }
  });

  it('declares the rate-limit headers on every response and Retry-After on 429 and 503', () => {
    for (const methods of Object.values(document.paths)) {
      for (const op of Object.values(methods)) {
        for (const [status, response] of Object.entries(op.responses)) {
          expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id']));
          if (status === '429' || status === '503') expect(Object.keys(response.headers)).toContain('Retry-After');
          else expect(Object.keys(response.headers)).not.toContain('Retry-After');
        }
      }
    }
  });

  it('documents Idempotency-Key on the routes that honour it only (the learning routes, the maintenance POSTs, reflect and relearn)', () => {
    const accepting = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => op.parameters?.some((parameter) => parameter.$ref === '#/components/parameters/Idempotency-Key'))
        .map(([method]) => `${method} ${path}`),
    );
    const maintenance = '/v1/agents/{agent_id}/maintenance';
    expect(accepting.sort()).toEqual(
      [
        `post ${THREAD}/observe`, `post ${THREAD}/observe-and-enrich`, `post ${THREAD}/observe-and-respond`, `post ${THREAD}/observe-file`,
        `post ${maintenance}`, `post ${maintenance}/{run_id}/apply`, `post ${maintenance}/{run_id}/undo`,
        'post /v1/agents/{agent_id}/review/reflect', 'post /v1/agents/{agent_id}/review/relearn',
      ].sort(),
    );
  });

  it('types the chat stream as context, delta, done and error events', () => {
    const stream = operation(`${THREAD}/chat/stream`, 'post').responses['200']!.content!;
    expect(Object.keys(stream)).toEqual(['text/event-stream']);
    expect(stream['text/event-stream']!.schema).toEqual({ $ref: '#/components/schemas/ChatStreamEvent' });
    expect(document.components.schemas.ChatStreamEvent!.oneOf!.map((item) => item.$ref)).toEqual([
      '#/components/schemas/ChatStreamContextEvent',
      '#/components/schemas/ChatStreamDeltaEvent',
      '#/components/schemas/ChatStreamDoneEvent',
      '#/components/schemas/ChatStreamErrorEvent',
    ]);
  });
});
