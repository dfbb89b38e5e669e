// Document ingest, end to end over HTTP on the server's real composition (PGlite state, LanceDB
// memory index, disk blobs, tesseract OCR) in a temporary data dir:
//
//   npx tsx bench/document-ingest.ts [--files TAMReview.pdf,tracemonkey.pdf,linn.pdf] [--runs 1]
//
// For each file: `uploadSeconds` is the observe-file request (conversion, OCR inside the request
// budget, chunking, storing turns), `committedSeconds` is from sending the upload until the
// observation status reads `committed` (deferred conversion included), plus turns, figures,
// figures_dropped, words_total and whether the upload was deferred. For linn.pdf (a scan) it also
// scores the ingested text (uploaded with overlap_chars 0) against linn.txt (character error rate, case kept and ignored), so the
// number reflects OCR as ingestion runs it (render scale 3, i.e. 216 dpi), not the standalone
// bench/ocr-accuracy.ts setting.
//
// Prints one JSON line per file, then a table.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createHandler } from '@memory-agents/http';
import { characterErrorRate, normalizeForScoring } from '@memory-agents/core/testing';
import { createMemoryService, fileSystemBlobs } from '@memory-agents/core';
import { postgresStore } from '@memory-agents/adapter-postgres';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { tesseractOcr } from '@memory-agents/ocr-tesseract';
import { documentConverter } from '@memory-agents/documents';

const docs = fileURLToPath(new URL('../../shared/fixtures/docs/', import.meta.url));
const { values } = parseArgs({ options: { files: { type: 'string', default: 'TAMReview.pdf,tracemonkey.pdf,linn.pdf' }, runs: { type: 'string', default: '1' } } });
const files = values.files.split(',').filter(Boolean);
const runs = Math.max(1, Number(values.runs));
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const dataDir = await mkdtemp(path.join(tmpdir(), 'ma-bench-docs-'));
// The composition of `memory-agents serve` (packages/server/src/compose.ts), keeping the store handle
// so the ingested turns can be read back.
const store = postgresStore({ dataDir: path.join(dataDir, 'pgdata') });
const service = createMemoryService({
  store,
  index: lancedbMemoryIndex({ uri: path.join(dataDir, 'lancedb') }),
  blobs: fileSystemBlobs({ directory: path.join(dataDir, 'blobs') }),
  ocr: tesseractOcr(),
  logger: quiet,
});
const close = () => service.stop();
await service.start();
const org = await service.admin.createOrganization({ name: 'bench' });
// The spec's 1 upload per 10 s per subject would only measure the limiter.
const wide = { limit: 10_000, windowSeconds: 10 };
await service.admin.setLimits({
  organizationId: org.organizationId,
  limits: { rateLimits: Object.fromEntries(['thread_create', 'observe', 'chat', 'observe_file'].map((op) => [op, { subject: wide, organization: wide }])) } as never,
});
const { key } = await service.admin.createKey({ organizationId: org.organizationId });
const server = createServer(createHandler(service, { logger: quiet }));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const auth = { authorization: `Bearer ${key}` };

async function json(method: string, url: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${url}`, { method, headers: { ...auth, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return response.json();
}

const seconds = (since: number) => (performance.now() - since) / 1000;
const results: Record<string, unknown>[] = [];
try {
  const agent = await json('POST', '/v1/agents', { agent_config: { role: 'reader', objective: 'learn documents' } });
  while ((await json('GET', `/v1/agents/${agent.agent_id}`)).status !== 'ready') await new Promise((resolve) => setTimeout(resolve, 50));
  for (const file of files) {
    for (let run = 0; run < runs; run++) {
      const thread = await json('POST', `/v1/agents/${agent.agent_id}/threads`, {});
      const threadPath = `/v1/agents/${agent.agent_id}/threads/${thread.thread_id}`;
      const bytes = await readFile(path.join(docs, file));
      const form = new FormData();
      form.append('file', new Blob([bytes]), file);
      form.append('allow_duplicate', 'true');
      // linn.pdf is scored against its transcript: without overlap its turns concatenate to the converted text.
      if (file === 'linn.pdf') form.append('overlap_chars', '0');
      const started = performance.now();
      const response = await fetch(`${base}${threadPath}/observe-file`, { method: 'POST', headers: auth, body: form });
      const accepted = (await response.json()) as any;
      const uploadSeconds = seconds(started);
      if (response.status !== 202) throw new Error(`${file}: ${response.status} ${JSON.stringify(accepted)}`);
      let status: any;
      for (;;) {
        status = await json('GET', `${threadPath}/observe/${accepted.observation_id}/status`);
        if (['committed', 'failed', 'cancelled'].includes(status.status)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const committedSeconds = seconds(started);
      const result: Record<string, unknown> = {
        file,
        bytes: bytes.length,
        status: status.status,
        deferred: accepted.deferred,
        uploadSeconds: Number(uploadSeconds.toFixed(2)),
        committedSeconds: Number(committedSeconds.toFixed(2)),
        turns: status.turns_total,
        figures: accepted.figures,
        figuresDropped: accepted.figures_dropped,
        wordsTotal: accepted.words_total,
      };
      if (file === 'linn.pdf') {
        const reference = await readFile(path.join(docs, 'linn.txt'), 'utf8');
        const text = await ingestedText(accepted.observation_id);
        result.cer = Number(characterErrorRate(normalizeForScoring(text), normalizeForScoring(reference)).toFixed(4));
        result.cerIgnoringCase = Number(characterErrorRate(normalizeForScoring(text).toLowerCase(), normalizeForScoring(reference).toLowerCase()).toFixed(4));
      }
      results.push(result);
      console.log(JSON.stringify(result));
    }
  }
} finally {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close();
  await rm(dataDir, { recursive: true, force: true });
}

/** The text of an ingest's turns, in order. */
async function ingestedText(jobId: string): Promise<string> {
  const turns = await store.turns.list({ jobId, fromIndex: 0, limit: 5000 });
  return turns.map((turn) => turn.text).join('\n');
}

console.log();
console.log('file              deferred  upload s  committed s  turns  figures  words');
for (const r of results) {
  console.log(
    `${String(r.file).padEnd(18)}${String(r.deferred).padEnd(10)}${String(r.uploadSeconds).padStart(8)}${String(r.committedSeconds).padStart(13)}${String(r.turns).padStart(7)}${String(r.figures).padStart(9)}${String(r.wordsTotal).padStart(7)}${r.cer === undefined ? '' : `  CER ${((r.cer as number) * 100).toFixed(2)} % (ignoring case ${((r.cerIgnoringCase as number) * 100).toFixed(2)} %)`}`,
  );
}
