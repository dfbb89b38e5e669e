import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countWords, inMemoryBlobs, inMemoryStore, type Store } from '@memory-agents/core';
import { documentText } from '@memory-agents/core/adapter';
import { convertDocument } from '@memory-agents/documents';
import { circularPagesPdf } from '../../packages/documents/src/__fixtures__/generated-files.js';
import { agentWithThread, fakeOcr, fixture, postForm, settle, SHARED_DOC_NAMES, SHARED_DOCS, startInProcess, type InProcess } from './document-support.js';

const text = (value: string) => new TextEncoder().encode(value);

/** Every turn the store holds for a job, in order. */
async function turnsOf(store: Store, jobId: string) {
  return store.turns.list({ jobId, fromIndex: 0, limit: 5000 });
}

describe('observe-file over HTTP: formats, chunking, words and figures (in-process server, real fixtures)', () => {
  let app: InProcess;
  const store = inMemoryStore();
  const blobs = inMemoryBlobs();
  const ocr = fakeOcr({ text: 'Scanned words about an old lighthouse keeper and his logbook.' });

  beforeAll(async () => {
    app = await startInProcess({ store, blobs, ocr: ocr.ocr });
  });
  afterAll(async () => app.close());

  const cases: { file: string; data: () => Uint8Array; format: string; contains: string; absent?: string }[] = [
    { file: 'tables.docx', data: () => fixture('tables.docx'), format: 'docx', contains: '|' },
    { file: 'wikipedia-source.html', data: () => fixture('wikipedia-source.html'), format: 'html', contains: 'Mozilla', absent: 'Personal tools' },
    { file: 'notes.md', data: () => text('# Lighthouses\n\nThe keeper lit the lamp at dusk.\n\n## Logbook\n\nEvery storm was written down.\n'), format: 'markdown', contains: '# Lighthouses' },
    { file: 'notes.txt', data: () => text('The keeper lit the lamp at dusk. Every storm was written down in the logbook.\n'), format: 'text', contains: 'keeper' },
    { file: 'add.ts', data: () => text('export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport const answer = add(40, 2);\n'), format: 'code', contains: 'function add' },
    { file: 'people.csv', data: () => text('name,role\nAda,engineer\nGrace,admiral\n'), format: 'csv', contains: 'Grace' },
    { file: 'people.json', data: () => text('{"people":[{"name":"Ada","role":"engineer"},{"name":"Grace","role":"admiral"}]}'), format: 'json', contains: 'Grace' },
    { file: 'tracemonkey.pdf', data: () => fixture('tracemonkey.pdf'), format: 'pdf', contains: 'Trace' },
  ];

  for (const testCase of cases) {
    it.skipIf(!SHARED_DOCS && SHARED_DOC_NAMES.has(testCase.file))(`reads ${testCase.file} as ${testCase.format}: one turn per piece, speaker = filename, words_total = words of every turn`, async () => {
      const { paths } = await agentWithThread(app.api);
      const accepted = await postForm(app.url, app.key, paths.observeFile, { data: testCase.data(), filename: testCase.file });
      expect(accepted.status, accepted.text).toBe(202);
      expect(accepted.body).toMatchObject({ accepted: true, filename: testCase.file, doc_format: testCase.format, duplicate: false, deferred: false, queued: false });
      expect(accepted.body.source_id).toMatch(/^src_[0-9a-f]{32}$/);
      expect(accepted.body).not.toHaveProperty('document_state');
      const turns = await turnsOf(store, accepted.body.observation_id);
      expect(turns).toHaveLength(accepted.body.turns_total);
      expect(turns.every((turn) => turn.speaker === testCase.file && turn.text.length <= 2000)).toBe(true);
      expect(accepted.body.words_total).toBe(turns.reduce((sum, turn) => sum + countWords(turn.text), 0));
      const all = turns.map((turn) => turn.text).join('\n');
      expect(all).toContain(testCase.contains);
      if (testCase.absent) expect(all).not.toContain(testCase.absent);
      if (testCase.format === 'pdf') expect(turns.every((turn) => typeof turn.details.page === 'number' && (turn.details.page as number) >= 1)).toBe(true);
      else expect(turns.every((turn) => turn.details.page === null)).toBe(true);
      const status = await settle(app.api, paths.status(accepted.body.observation_id));
      expect(status).toMatchObject({ status: 'committed', turns_total: turns.length, turns_processed: turns.length });
      if (testCase.format === 'pdf') await expectFigures(accepted.body, turns);
    });
  }

  /** tracemonkey.pdf: figures kept as crops in the BlobStore and described inline where they appear. */
  async function expectFigures(body: { figures: number; figures_dropped: number; source_id: string }, turns: { text: string }[]) {
    // The paper has 8 captioned figures, all on unrotated pages and under the per-document limit:
    // every one kept (none dropped), each described once where it appears.
    expect({ figures: body.figures, figures_dropped: body.figures_dropped }).toEqual({ figures: 8, figures_dropped: 0 });
    const described = turns.reduce((count, turn) => count + (turn.text.match(/\[Figure \(page /g) ?? []).length, 0);
    expect(described).toBe(body.figures);
    const orgId = (await app.api.get('/v1/session')).body.organization_id;
    const crop = await blobs.get({ key: `figures/${orgId}/${body.source_id}/1` });
    expect(crop?.mediaType).toBe('image/png');
    expect(String.fromCharCode(...crop!.data.subarray(1, 4))).toBe('PNG');
  }

  it.skipIf(!SHARED_DOCS)('reads a scanned page through the OCR port inside the request (linn.pdf, one page)', async () => {
    const { paths } = await agentWithThread(app.api);
    const accepted = await postForm(app.url, app.key, paths.observeFile, { data: fixture('linn.pdf'), filename: 'linn.pdf' });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body).toMatchObject({ doc_format: 'pdf', deferred: false, turns_total: 1 });
    expect((await turnsOf(store, accepted.body.observation_id))[0]).toMatchObject({ text: expect.stringContaining('lighthouse keeper'), details: expect.objectContaining({ page: 1 }) });
  });

  describe('chunking settings', () => {
    const markdown = () =>
      text(
        Array.from({ length: 12 }, (_, i) => `## Section ${i + 1}\n\n${'The keeper wrote about storms and ships. '.repeat(20 + i)}\n\n\`\`\`ts\nfunction f${i}() {\n  return ${i};\n}\n\`\`\`\n`).join('\n'),
      );

    for (const strategy of ['auto', 'length', 'sentence', 'code', 'structure'] as const) {
      it(`strategy ${strategy}: every piece within max_chars; without overlap the length strategies are lossless`, async () => {
        const { paths } = await agentWithThread(app.api);
        const accepted = await postForm(app.url, app.key, paths.observeFile, { data: markdown(), filename: `doc-${strategy}.md` }, { strategy, max_chars: '300', overlap_chars: '0' });
        expect(accepted.status, accepted.text).toBe(202);
        const turns = await turnsOf(store, accepted.body.observation_id);
        expect(turns.length).toBeGreaterThan(1);
        expect(turns.every((turn) => turn.text.length <= 300 && turn.text.trim() !== '')).toBe(true);
        if (strategy === 'auto' || strategy === 'length') {
          const converted = await convertDocument(markdown(), { filename: 'doc.md' });
          expect(turns.map((turn) => turn.text).join('')).toBe(documentText(converted.blocks));
        }
        if (strategy === 'sentence') expect(turns.filter((turn) => /[a-z]$/.test(turn.text.trimEnd())).length).toBeLessThan(turns.length);
        if (strategy === 'structure') expect(turns.filter((turn) => turn.text.startsWith('## Section')).length).toBeGreaterThanOrEqual(6);
      });
    }

    it('overlap repeats the end of the previous piece', async () => {
      const { paths } = await agentWithThread(app.api);
      const accepted = await postForm(app.url, app.key, paths.observeFile, { data: markdown(), filename: 'overlap.md' }, { max_chars: '400', overlap_chars: '50' });
      const turns = await turnsOf(store, accepted.body.observation_id);
      expect(turns.every((turn) => turn.text.length <= 400)).toBe(true);
      expect(turns[1]!.text.startsWith(turns[0]!.text.slice(-50))).toBe(true);
    });

    const refusals: [Record<string, string>, number][] = [
      [{ max_chars: '199' }, 422],
      [{ max_chars: '4001' }, 422],
      [{ max_chars: 'many' }, 422],
      [{ overlap_chars: '-1' }, 422],
      [{ max_chars: '1000', overlap_chars: '500' }, 400],
      [{ strategy: 'paragraph' }, 422],
      [{ allow_duplicate: 'yes' }, 422],
    ];
    for (const [fields, status] of refusals) {
      it(`refuses ${JSON.stringify(fields)} with ${status} invalid_request before reading the file`, async () => {
        const { paths } = await agentWithThread(app.api);
        const refused = await postForm(app.url, app.key, paths.observeFile, { data: text('hello there'), filename: 'a.txt' }, fields);
        expect(refused.status).toBe(status);
        expect(refused.body.code).toBe('invalid_request');
      });
    }

    it('413 document_too_many_turns past 2,000 pieces', async () => {
      const { paths } = await agentWithThread(app.api);
      const refused = await postForm(app.url, app.key, paths.observeFile, { data: text('word '.repeat(90_000)), filename: 'long.txt' }, { max_chars: '200', overlap_chars: '0' });
      expect(refused.status).toBe(413);
      expect(refused.body.code).toBe('document_too_many_turns');
    });
  });

  describe('document error codes', () => {
    const errors: [string, () => Uint8Array, number, string][] = [
      ['issue6010_1.pdf', () => fixture('issue6010_1.pdf'), 400, 'encrypted_document'],
      ['bug1020226.pdf', () => fixture('bug1020226.pdf'), 400, 'malformed_document'],
      ['invalid.pdf', () => fixture('invalid.pdf'), 400, 'malformed_document'],
      ['empty_protected.pdf', () => fixture('empty_protected.pdf'), 400, 'empty_document'],
      ['empty.txt', () => new Uint8Array(0), 400, 'empty_document'],
      ['blank.txt', () => text('   \n\n  \t\n'), 400, 'empty_document'],
      ['archive.bin', () => new Uint8Array([0x50, 0x4b, 0x03, 0x04, ...Array.from({ length: 200 }, (_, i) => (i * 37) % 256)]), 400, 'unsupported_document'],
      ['noise.bin', () => new Uint8Array(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256)), 400, 'unsupported_document'],
      ['circular.pdf', () => circularPagesPdf(), 400, 'ingestion_failed'],
    ];
    for (const [name, data, status, code] of errors) {
      it.skipIf(!SHARED_DOCS && SHARED_DOC_NAMES.has(name))(`${name} -> ${status} ${code}`, async () => {
        const { paths } = await agentWithThread(app.api);
        const refused = await postForm(app.url, app.key, paths.observeFile, { data: data(), filename: name });
        expect(refused.status, refused.text).toBe(status);
        expect(Object.keys(refused.body).sort()).toEqual(['code', 'error', 'request_id']);
        expect(refused.body.code).toBe(code);
      });
    }
  });

  describe('multipart limits', () => {
    it('refuses a second file, an unknown field, a form without file and a non-multipart body', async () => {
      const { paths } = await agentWithThread(app.api);
      const form = new FormData();
      form.append('file', new Blob([text('a')]), 'a.txt');
      form.append('file', new Blob([text('b')]), 'b.txt');
      const two = await fetch(`${app.url}${paths.observeFile}`, { method: 'POST', headers: { authorization: `Bearer ${app.key}` }, body: form });
      expect(two.status).toBe(400);
      expect(((await two.json()) as { code: string }).code).toBe('invalid_request');
      const unknown = await postForm(app.url, app.key, paths.observeFile, { data: text('hello'), filename: 'a.txt' }, { colour: 'blue' });
      expect([unknown.status, unknown.body.code]).toEqual([400, 'invalid_request']);
      const none = await postForm(app.url, app.key, paths.observeFile, null, { strategy: 'auto' });
      expect([none.status, none.body.code]).toEqual([422, 'invalid_request']);
      const json = await app.api.post(paths.observeFile, { file: 'hello' });
      expect([json.status, json.body.code]).toEqual([400, 'invalid_request']);
      const long = await postForm(app.url, app.key, paths.observeFile, { data: text('hello'), filename: 'a.txt' }, { strategy: 'x'.repeat(5000) });
      expect([long.status, long.body.code]).toEqual([400, 'invalid_request']);
    });

    it('413 document_too_large while the body streams (no Content-Length), the connection answered, nothing converted', async () => {
      const limited = await startInProcess({}, { maxUploadBytes: 100_000 });
      try {
        const { paths } = await agentWithThread(limited.api);
        const boundary = 'x-boundary-42';
        const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`;
        const response = await new Promise<{ status: number; body: string; sent: number }>((resolve, reject) => {
          const req = httpRequest(`${limited.url}${paths.observeFile}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${limited.key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
          });
          let sent = 0;
          let answered = false;
          req.on('response', (res) => {
            answered = true;
            let body = '';
            res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body, sent }));
          });
          req.on('error', (error) => (answered ? undefined : reject(error)));
          req.write(head);
          const chunk = Buffer.alloc(16 * 1024, 'a');
          const pump = () => {
            // Keeps sending past the limit, up to 4x, unless answered first.
            while (!answered && sent < 400_000) {
              sent += chunk.length;
              if (!req.write(chunk)) return void req.once('drain', pump);
            }
            if (!answered) req.end(`\r\n--${boundary}--\r\n`);
          };
          pump();
        });
        expect(response.status).toBe(413);
        expect(JSON.parse(response.body).code).toBe('document_too_large');
        expect((await limited.api.get(paths.sources)).body.sources).toEqual([]);
      } finally {
        await limited.close();
      }
    });
  });
});
