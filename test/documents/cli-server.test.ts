import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { agentWithThread, fixture, postForm, settle, SHARED_DOCS } from './document-support.js';

/**
 * The built CLI server (PGlite + LanceDB + disk blobs + tesseract OCR) with the real fixtures.
 * Each upload acts for its own person (`X-SP-End-User`), so the spec's 1 upload per 10 s per
 * subject never refuses one of these tests.
 */
describe('documents against the built CLI server', () => {
  let server: ServerProcess;
  let api: Client;

  beforeAll(async () => {
    server = await startServerProcess();
    api = client(server.url, server.key);
  });
  afterAll(async () => {
    if (process.env.DEBUG_SERVER) console.log(server.output().slice(-6000));
    await server.stop();
    await removeDataDir(server.dataDir);
  });

  it.skipIf(!SHARED_DOCS)('tracemonkey.pdf: figures, committed, and chat cites it by src_ id and page with a working href', async () => {
    const person = { 'x-sp-end-user': 'reader-1' };
    const { paths } = await agentWithThread(api, person);
    const accepted = await postForm(server.url, server.key!, paths.observeFile, { data: fixture('tracemonkey.pdf'), filename: 'tracemonkey.pdf' }, {}, person, { ownConnection: true });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body).toMatchObject({ doc_format: 'pdf', deferred: false, duplicate: false, source_id: expect.stringMatching(/^src_[0-9a-f]{32}$/) });
    expect(accepted.body.figures).toBeGreaterThan(0);
    expect(accepted.body.turns_total).toBeGreaterThan(10);
    expect(await settle(api, paths.status(accepted.body.observation_id), person, undefined, 200)).toMatchObject({ status: 'committed', turns_processed: accepted.body.turns_total });

    const chat = await api.post(paths.chat, { turn_id: 'tm-1', message: 'How does TraceMonkey record trace trees for hot loops?' }, { headers: person });
    expect(chat.status, chat.text).toBe(200);
    const citation = chat.body.citations.find((c: { source_id: string }) => c.source_id === accepted.body.source_id);
    expect(citation).toMatchObject({ media_type: 'application/pdf', href: paths.original(accepted.body.source_id) });
    expect(citation.label).toMatch(/^tracemonkey\.pdf, page \d+$/);
    const original = await fetch(`${server.url}${citation.href}`, { headers: { authorization: `Bearer ${server.key}` } });
    expect(original.status).toBe(200);
    // Buffer.equals, not toEqual: a deep compare of a megabyte blocks the event loop for seconds.
    expect(Buffer.from(await original.arrayBuffer()).equals(Buffer.from(fixture('tracemonkey.pdf')))).toBe(true);

    const listed = await api.get(paths.sources, { headers: person });
    expect(listed.body.sources).toEqual([
      expect.objectContaining({ source_id: accepted.body.source_id, document_state: 'completed', turns_learned: accepted.body.turns_total, can_finish: false, media_type: 'application/pdf' }),
    ]);
  });

  it.skipIf(!SHARED_DOCS)('linn.pdf (a scan) is read by tesseract inside the request', async () => {
    const person = { 'x-sp-end-user': 'reader-2' };
    const { paths } = await agentWithThread(api, person);
    const accepted = await postForm(server.url, server.key!, paths.observeFile, { data: fixture('linn.pdf'), filename: 'linn.pdf' }, {}, person, { ownConnection: true });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body).toMatchObject({ doc_format: 'pdf', deferred: false });
    expect(accepted.body.words_total).toBeGreaterThan(300);
    await settle(api, paths.status(accepted.body.observation_id), person, undefined, 200);
    const chat = await api.post(paths.chat, { turn_id: 'linn-1', message: 'How many tracks does the LinnSequencer record?' }, { headers: person });
    expect(chat.body.memory_context).toMatch(/LinnSequencer/i);
    expect(chat.body.citations.some((c: { label: string }) => c.label === 'linn.pdf, page 1')).toBe(true);
  });

  it('413 document_too_large while a 10 MB+ body streams; the connection is answered', async () => {
    const person = { 'x-sp-end-user': 'reader-3' };
    const { paths } = await agentWithThread(api, person);
    const boundary = 'cli-boundary';
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${server.url}${paths.observeFile}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.key}`, ...person, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
      });
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', (error) => (answered ? undefined : reject(error)));
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 'b');
      let sent = 0;
      const pump = () => {
        while (!answered && sent < 12 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end(`\r\n--${boundary}--\r\n`);
      };
      pump();
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).code).toBe('document_too_large');
  });

  it('POST /v1/images stores a PNG and returns its size', async () => {
    const { createCanvas } = await import('@napi-rs/canvas');
    const canvas = createCanvas(64, 48);
    canvas.getContext('2d').fillRect(0, 0, 10, 10);
    const png = new Uint8Array(await canvas.encode('png'));
    const created = await postForm(server.url, server.key!, '/v1/images', { data: png, filename: 'chart.png' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ media_type: 'image/png', width: 64, height: 48, bytes: png.length });
  });
});
