import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMemoryBlobs, inMemoryStore } from '@memory-agents/core';
import { client } from '../support/client.js';
import { GENEROUS_UPLOAD_RATES, agentWithThread, controllableWriter, failingBlobs, fakeOcr, fixture, postForm, settle, SHARED_DOCS, startInProcess, type InProcess } from './document-support.js';

const text = (value: string) => new TextEncoder().encode(value);
/** A Markdown document of several sections (several pieces at max_chars 300). */
const sections = (seed: string) =>
  text(Array.from({ length: 6 }, (_, i) => `## ${seed} section ${i + 1}\n\n${`The ${seed} keeper logged storm number ${i + 1} and the ships it sank. `.repeat(5)}`).join('\n\n'));
const SMALL = { max_chars: '300', overlap_chars: '0' };

describe('document rules over HTTP (in-process server)', () => {
  let app: InProcess;
  const control = controllableWriter();
  const ocr = fakeOcr({ text: 'Scanned words: the lighthouse keeper Alfred Linn kept the light for forty years.' });
  let now = Date.parse('2026-11-01T00:00:00.000Z');
  const clock = { now: () => now };

  beforeAll(async () => {
    app = await startInProcess({ store: inMemoryStore(), writer: control.writer, ocr: ocr.ocr, clock });
  });
  afterAll(async () => {
    control.release();
    await app.close();
  });
  const upload = (path: string, data: Uint8Array, filename = 'doc.md', fields: Record<string, string> = SMALL, headers: Record<string, string> = {}) =>
    postForm(app.url, app.key, path, { data, filename }, fields, headers);

  describe('duplicates', () => {
    it('same bytes in the same thread: 202 duplicate describing the original, nothing read again', async () => {
      const { paths } = await agentWithThread(app.api);
      const first = await upload(paths.observeFile, sections('alpha'));
      expect(first.status, first.text).toBe(202);
      await settle(app.api, paths.status(first.body.observation_id));
      const again = await upload(paths.observeFile, sections('alpha'), 'renamed.md');
      expect(again.status).toBe(202);
      expect(again.body).toEqual({ ...first.body, duplicate: true, document_state: 'completed' });
      expect((await app.api.get(paths.sources)).body.sources).toHaveLength(1);
    });

    it('same bytes in another thread: 409 document_already_ingested, unless allow_duplicate=true', async () => {
      const { agentId, paths } = await agentWithThread(app.api);
      const first = await upload(paths.observeFile, sections('beta'));
      await settle(app.api, paths.status(first.body.observation_id));
      const other = (await app.api.post(`/v1/agents/${agentId}/threads`, {})).body.thread_id;
      const otherPath = `/v1/agents/${agentId}/threads/${other}/observe-file`;
      const refused = await upload(otherPath, sections('beta'));
      expect([refused.status, refused.body.code]).toEqual([409, 'document_already_ingested']);
      const allowed = await upload(otherPath, sections('beta'), 'doc.md', { ...SMALL, allow_duplicate: 'true' });
      expect(allowed.status).toBe(202);
      expect(allowed.body).toMatchObject({ duplicate: false, thread_id: other, source_id: first.body.source_id, turns_total: first.body.turns_total });
      expect(allowed.body.observation_id).not.toBe(first.body.observation_id);
      await settle(app.api, `/v1/agents/${agentId}/threads/${other}/observe/${allowed.body.observation_id}/status`);
    });

    it('while the agent is learning the file: 202 duplicate `ingesting` in its thread, 409 duplicate_upload_in_progress elsewhere', async () => {
      const { agentId, paths } = await agentWithThread(app.api);
      control.hold();
      try {
        const first = await upload(paths.observeFile, sections('gamma'));
        expect(first.status).toBe(202);
        const joined = await upload(paths.observeFile, sections('gamma'));
        expect(joined.body).toMatchObject({ duplicate: true, document_state: 'ingesting', observation_id: first.body.observation_id });
        const other = (await app.api.post(`/v1/agents/${agentId}/threads`, {})).body.thread_id;
        const refused = await upload(`/v1/agents/${agentId}/threads/${other}/observe-file`, sections('gamma'), 'doc.md', { ...SMALL, allow_duplicate: 'true' });
        expect([refused.status, refused.body.code]).toEqual([409, 'duplicate_upload_in_progress']);
      } finally {
        control.release();
      }
    });
  });

  describe('sources listing and finish-learning', () => {
    it('a partial upload: listed with can_finish, 409 document_uploaded_elsewhere, resumed in its own thread reading only what was not learned', async () => {
      const { agentId, threadId, paths } = await agentWithThread(app.api);
      control.failWhen((turnText) => turnText.includes('section 2') || turnText.includes('section 5'));
      const first = await upload(paths.observeFile, sections('delta'));
      const failed = await settle(app.api, paths.status(first.body.observation_id));
      control.failWhen(() => false);
      expect(failed.status).toBe('failed');
      const notLearned = failed.learning.not_learned_turns.reduce((sum: number, range: { first: number; last: number }) => sum + range.last - range.first + 1, 0);
      expect(notLearned).toBeGreaterThan(0);
      const [listed] = (await app.api.get(paths.sources)).body.sources;
      expect(listed).toMatchObject({
        source_id: first.body.source_id,
        filename: 'doc.md',
        doc_format: 'markdown',
        media_type: 'text/markdown',
        document_state: 'partial',
        thread_id: threadId,
        observation_id: first.body.observation_id,
        turns_total: first.body.turns_total,
        turns_learned: first.body.turns_total - notLearned,
        can_finish: true,
      });

      const other = (await app.api.post(`/v1/agents/${agentId}/threads`, {})).body.thread_id;
      const otherThread = `/v1/agents/${agentId}/threads/${other}`;
      const elsewhere = await upload(`${otherThread}/observe-file`, sections('delta'));
      expect([elsewhere.status, elsewhere.body.code]).toEqual([409, 'document_uploaded_elsewhere']);

      const finishPath = `${otherThread}/sources/${first.body.source_id}/finish-learning`;
      const otherSettings = await app.api.post(finishPath, { max_chars: 500 });
      expect([otherSettings.status, otherSettings.body.code]).toEqual([409, 'conflict']);
      const resumed = await app.api.post(finishPath, { max_chars: 300, overlap_chars: 0 });
      expect(resumed.status, resumed.text).toBe(202);
      expect(resumed.body).toMatchObject({ thread_id: threadId, turns_total: notLearned, duplicate: false, document_state: 'ingesting', source_id: first.body.source_id });
      const done = await settle(app.api, paths.status(resumed.body.observation_id));
      expect(done).toMatchObject({ status: 'committed', turns_total: notLearned });
      const [after] = (await app.api.get(paths.sources)).body.sources;
      expect(after).toMatchObject({ document_state: 'completed', turns_learned: first.body.turns_total, can_finish: false, observation_id: resumed.body.observation_id });
      const nothingLeft = await app.api.post(finishPath, {});
      expect([nothingLeft.status, nothingLeft.body.code]).toEqual([409, 'conflict']);

      const here = await app.api.post(finishPath, { here: true });
      expect(here.status, here.text).toBe(202);
      expect(here.body).toMatchObject({ thread_id: other, turns_total: first.body.turns_total, words_total: first.body.words_total });
      await settle(app.api, `${otherThread}/observe/${here.body.observation_id}/status`);
      expect((await app.api.get(`${otherThread}/sources`)).body.sources[0]).toMatchObject({ document_state: 'completed', thread_id: other });
    });

    it('a person who cannot open the original thread gets 409, and `here: true` reads the whole file in theirs', async () => {
      const alice = { 'x-sp-end-user': 'alice' };
      const bob = { 'x-sp-end-user': 'bob' };
      const { agentId, paths } = await agentWithThread(app.api, alice);
      control.failWhen((turnText) => turnText.includes('section 3'));
      const first = await upload(paths.observeFile, sections('epsilon'), 'doc.md', SMALL, alice);
      expect(first.status, first.text).toBe(202);
      await settle(app.api, paths.status(first.body.observation_id), alice);
      control.failWhen(() => false);
      const bobThread = (await app.api.post(`/v1/agents/${agentId}/threads`, {}, { headers: bob })).body.thread_id;
      const finishPath = `/v1/agents/${agentId}/threads/${bobThread}/sources/${first.body.source_id}/finish-learning`;
      const refused = await app.api.post(finishPath, {}, { headers: bob });
      expect([refused.status, refused.body.code]).toEqual([409, 'conflict']);
      const here = await app.api.post(finishPath, { here: true }, { headers: bob });
      expect(here.status, here.text).toBe(202);
      expect(here.body).toMatchObject({ thread_id: bobThread, turns_total: first.body.turns_total });
      await settle(app.api, `/v1/agents/${agentId}/threads/${bobThread}/observe/${here.body.observation_id}/status`, bob);
    });

    it('finish-learning: unknown source 404, malformed body 422', async () => {
      const { paths } = await agentWithThread(app.api);
      expect((await app.api.post(paths.finish(`src_${'0'.repeat(32)}`), {})).status).toBe(404);
      expect((await app.api.post(paths.finish('src_nope'), {})).status).toBe(404);
      const bad = await app.api.post(paths.finish(`src_${'0'.repeat(32)}`), { here: 'yes' });
      expect([bad.status, bad.body.code]).toEqual([422, 'invalid_request']);
    });
  });

  describe('one file at a time per agent, three agents per organization', () => {
    it('a second file waits with queued: true (status converting) and starts by itself', async () => {
      const { paths } = await agentWithThread(app.api);
      control.hold();
      let second;
      try {
        const first = await upload(paths.observeFile, sections('zeta'));
        expect(first.body.queued).toBe(false);
        second = await upload(paths.observeFile, sections('eta'));
        expect(second.status).toBe(202);
        expect(second.body.queued).toBe(true);
        const waiting = (await app.api.get(paths.status(second.body.observation_id))).body;
        expect(waiting).toMatchObject({ status: 'converting', queued: true });
      } finally {
        control.release();
      }
      expect(await settle(app.api, paths.status(second.body.observation_id))).toMatchObject({ status: 'committed', queued: false });
    });

    it('observe-file while an observe runs: 429 with Retry-After 1', async () => {
      const { paths, agentId, threadId } = await agentWithThread(app.api);
      control.hold();
      try {
        const observed = await app.api.post(`/v1/agents/${agentId}/threads/${threadId}/observe`, { observations: [{ content: [{ type: 'text', text: 'hello' }] }] });
        expect(observed.status).toBe(202);
        const refused = await upload(paths.observeFile, sections('theta'));
        expect([refused.status, refused.body.code, refused.headers.get('retry-after')]).toEqual([429, 'rate_limit_exceeded', '1']);
      } finally {
        control.release();
      }
    });

    it('a fourth agent of the organization learning a file: 429 with Retry-After 90, details ingestion-organization', async () => {
      control.hold();
      try {
        for (const seed of ['iota', 'kappa', 'lambda']) {
          const { paths } = await agentWithThread(app.api);
          expect((await upload(paths.observeFile, sections(seed))).status).toBe(202);
        }
        const { paths } = await agentWithThread(app.api);
        const refused = await upload(paths.observeFile, sections('mu'));
        expect([refused.status, refused.body.code, refused.body.details, refused.headers.get('retry-after')]).toEqual([429, 'rate_limit_exceeded', 'ingestion-organization', '90']);
      } finally {
        control.release();
      }
      await app.service.idle();
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the original 202 byte for byte; other bytes or chunking with the key are 409; kept 24 hours', async () => {
      const { paths } = await agentWithThread(app.api);
      const key = { 'idempotency-key': 'upload-nu-1' };
      const first = await upload(paths.observeFile, sections('nu'), 'doc.md', SMALL, key);
      expect(first.status).toBe(202);
      await settle(app.api, paths.status(first.body.observation_id));
      const replay = await upload(paths.observeFile, sections('nu'), 'doc.md', SMALL, key);
      expect(replay.status).toBe(202);
      expect(replay.text).toBe(first.text);
      const otherBytes = await upload(paths.observeFile, sections('xi'), 'doc.md', SMALL, key);
      expect([otherBytes.status, otherBytes.body.code]).toEqual([409, 'conflict']);
      const otherChunking = await upload(paths.observeFile, sections('nu'), 'doc.md', { max_chars: '400', overlap_chars: '0' }, key);
      expect([otherChunking.status, otherChunking.body.code]).toEqual([409, 'conflict']);
      now += 25 * 60 * 60 * 1000;
      const afterExpiry = await upload(paths.observeFile, sections('xi'), 'doc.md', SMALL, key);
      expect(afterExpiry.status).toBe(202);
      expect(afterExpiry.body.observation_id).not.toBe(first.body.observation_id);
      await settle(app.api, paths.status(afterExpiry.body.observation_id));
    });

    it.skipIf(!SHARED_DOCS)('a retry while the first request still runs: 409', async () => {
      const { paths } = await agentWithThread(app.api);
      const key = { 'idempotency-key': 'scan-1' };
      ocr.hold();
      const first = upload(paths.observeFile, fixture('linn.pdf'), 'linn.pdf', {}, key);
      try {
        for (let i = 0; i < 200 && ocr.calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        const retry = await upload(paths.observeFile, fixture('linn.pdf'), 'linn.pdf', {}, key);
        expect([retry.status, retry.body.code]).toEqual([409, 'conflict']);
      } finally {
        ocr.release();
      }
      expect((await first).status).toBe(202);
    });
  });

  describe('chat cites document memory by src_ id and page, and the href serves the original', () => {
    it.skipIf(!SHARED_DOCS)('linn.pdf (OCR): answer cites "linn.pdf, page 1" with media_type application/pdf', async () => {
      const { paths } = await agentWithThread(app.api);
      const accepted = await upload(paths.observeFile, fixture('linn.pdf'), 'linn.pdf', {});
      await settle(app.api, paths.status(accepted.body.observation_id));
      const chat = await app.api.post(paths.chat, { turn_id: 't1', message: 'Who kept the lighthouse light for forty years?' });
      expect(chat.status, chat.text).toBe(200);
      const citation = chat.body.citations.find((c: { source_id: string }) => c.source_id === accepted.body.source_id);
      expect(citation).toMatchObject({ label: 'linn.pdf, page 1', media_type: 'application/pdf', href: paths.original(accepted.body.source_id), verified: true });
      const original = await fetch(`${app.url}${citation.href}`, { headers: { authorization: `Bearer ${app.key}` } });
      expect(original.status).toBe(200);
      expect(original.headers.get('content-type')).toBe('application/pdf');
      expect(new Uint8Array(await original.arrayBuffer())).toEqual(fixture('linn.pdf'));
      const stranger = await startInProcess();
      try {
        const strangerAgent = await agentWithThread(stranger.api);
        expect((await stranger.api.get(`/v1/agents/${strangerAgent.agentId}/sources/${accepted.body.source_id}`)).status).toBe(404);
      } finally {
        await stranger.close();
      }
    });
  });
});

describe('document failure paths (in-process server with failing ports)', () => {
  it('blob storage down: ingestion still succeeds, source_id is ""', async () => {
    const app = await startInProcess({ blobs: failingBlobs() });
    try {
      const { paths } = await agentWithThread(app.api);
      const accepted = await postForm(app.url, app.key, paths.observeFile, { data: sections('omicron'), filename: 'doc.md' });
      expect(accepted.status, accepted.text).toBe(202);
      expect(accepted.body.source_id).toBe('');
      expect(await settle(app.api, paths.status(accepted.body.observation_id))).toMatchObject({ status: 'committed' });
      expect((await app.api.get(paths.sources)).body.sources[0]).toMatchObject({ source_id: '', can_finish: false, document_state: 'completed' });
    } finally {
      await app.close();
    }
  });

  it('an organization out of credit: 402 payment_required, nothing stored; with credit the upload is charged its words_total', async () => {
    const app = await startInProcess();
    try {
      const broke = await app.service.admin.createOrganization({ name: 'broke', credits: '0', limits: { rateLimits: GENEROUS_UPLOAD_RATES } as never });
      const { key } = await app.service.admin.createKey({ organizationId: broke.organizationId });
      const api = client(app.url, key);
      const { paths } = await agentWithThread(api);
      const refused = await postForm(app.url, key, paths.observeFile, { data: sections('sigma'), filename: 'doc.md' });
      expect([refused.status, refused.body.code]).toEqual([402, 'payment_required']);
      expect((await api.get(paths.sources)).body.sources).toEqual([]);
      await app.service.admin.addCredits({ organizationId: broke.organizationId, amount: '100' });
      const accepted = await postForm(app.url, key, paths.observeFile, { data: sections('sigma'), filename: 'doc.md' });
      expect(accepted.status, accepted.text).toBe(202);
      await settle(api, paths.status(accepted.body.observation_id));
      const billing = await api.get('/v1/billing');
      const charged = billing.body.entries.filter((entry: { in_words: number; cost: string }) => Number(entry.cost) > 0);
      expect(charged.reduce((sum: number, entry: { in_words: number }) => sum + entry.in_words, 0)).toBe(accepted.body.words_total);
    } finally {
      await app.close();
    }
  });

  it.skipIf(!SHARED_DOCS)('OCR port failing: 502 ocr_failed; no OCR port: 400 document_needs_ocr', async () => {
    const failing = await startInProcess({ ocr: fakeOcr({ fail: true }).ocr });
    const none = await startInProcess({ ocr: null });
    try {
      for (const [app, status, code] of [[failing, 502, 'ocr_failed'], [none, 400, 'document_needs_ocr']] as const) {
        const { paths } = await agentWithThread(app.api);
        const refused = await postForm(app.url, app.key, paths.observeFile, { data: fixture('linn.pdf'), filename: 'linn.pdf' });
        expect([refused.status, refused.body.code]).toEqual([status, code]);
      }
    } finally {
      await failing.close();
      await none.close();
    }
  });

  it.skipIf(!SHARED_DOCS)('converter budgets: document_too_many_pages, document_too_large_for_ocr, document_too_complex', async () => {
    const cases = [
      [{ maxOcrPages: 0 }, 'linn.pdf', 'document_too_many_pages'],
      [{ maxOcrBytes: 1000 }, 'linn.pdf', 'document_too_large_for_ocr'],
      [{ maxPages: 2 }, 'tracemonkey.pdf', 'document_too_complex'],
    ] as const;
    for (const [convertLimits, file, code] of cases) {
      const app = await startInProcess({ ocr: fakeOcr().ocr, documents: { convertLimits } });
      try {
        const { paths } = await agentWithThread(app.api);
        const refused = await postForm(app.url, app.key, paths.observeFile, { data: fixture(file), filename: file });
        expect([refused.status, refused.body.code]).toEqual([413, code]);
      } finally {
        await app.close();
      }
    }
  });

  it.skipIf(!SHARED_DOCS)('beyond the in-request OCR budget: deferred (turns_total 0, status converting), then the real count', async () => {
    const ocr = fakeOcr();
    const app = await startInProcess({ ocr: ocr.ocr, documents: { ocrPagesInRequest: 0 } });
    try {
      const { paths } = await agentWithThread(app.api);
      ocr.hold();
      const accepted = await postForm(app.url, app.key, paths.observeFile, { data: fixture('linn.pdf'), filename: 'linn.pdf' });
      expect(accepted.status, accepted.text).toBe(202);
      expect(accepted.body).toMatchObject({ deferred: true, turns_total: 0, doc_format: 'pdf', words_total: 0 });
      expect((await app.api.get(paths.status(accepted.body.observation_id))).body).toMatchObject({ status: 'converting', turns_total: 0 });
      ocr.release();
      expect(await settle(app.api, paths.status(accepted.body.observation_id))).toMatchObject({ status: 'committed', turns_total: 1, turns_processed: 1 });
      expect((await app.api.get(paths.sources)).body.sources[0]).toMatchObject({ document_state: 'completed', turns_total: 1 });
    } finally {
      ocr.release();
      await app.close();
    }
  });

  it.skipIf(!SHARED_DOCS)('a deferred conversion left by a stopped process is resumed from the stored original by the next one', async () => {
    const store = inMemoryStore();
    const blobs = inMemoryBlobs();
    const stuck = fakeOcr();
    stuck.hold();
    const first = await startInProcess({ store, blobs, ocr: stuck.ocr, documents: { ocrPagesInRequest: 0 } });
    const { paths } = await agentWithThread(first.api);
    const accepted = await postForm(first.url, first.key, paths.observeFile, { data: fixture('linn.pdf'), filename: 'linn.pdf' });
    expect(accepted.body.deferred).toBe(true);
    // The first process never finishes its conversion; a second one starts on the same state.
    const second = await startInProcess({ store, blobs, ocr: fakeOcr().ocr, documents: { ocrPagesInRequest: 0 } });
    try {
      const api = client(second.url, first.key);
      expect(await settle(api, paths.status(accepted.body.observation_id))).toMatchObject({ status: 'committed', turns_total: 1 });
    } finally {
      stuck.release();
      await second.close();
      await first.close();
    }
  });

  it.skipIf(!SHARED_DOCS)('a deferred conversion that fails ends the job failed with the document code', async () => {
    const app = await startInProcess({ ocr: fakeOcr({ fail: true }).ocr, documents: { ocrPagesInRequest: 0 } });
    try {
      const { paths } = await agentWithThread(app.api);
      const accepted = await postForm(app.url, app.key, paths.observeFile, { data: fixture('linn.pdf'), filename: 'linn.pdf' });
      expect(accepted.body.deferred).toBe(true);
      const failed = await settle(app.api, paths.status(accepted.body.observation_id));
      expect(failed).toMatchObject({ status: 'failed', turns_total: 0, error: expect.stringContaining('ocr_failed') });
      expect((await app.api.get(paths.sources)).body.sources[0]).toMatchObject({ document_state: 'failed', can_finish: true });
    } finally {
      await app.close();
    }
  });
});
