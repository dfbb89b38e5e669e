import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isServiceError } from '@memory-agents/core';
import { buildPdf, describeDocumentConverterConformance } from '@memory-agents/core/testing';
import { documentConverter } from '@memory-agents/documents';
import { textImage, textPng } from '../../documents/src/__fixtures__/generated-files.js';
import { documentsInChildProcess, type DocumentsProcess } from './documents-process.js';

// One child for the whole suite (it stays up between tests): a child start under vitest compiles
// the TypeScript entry with tsx first, a few seconds each.
const shared = documentsInChildProcess();
afterAll(() => shared.close());
describeDocumentConverterConformance({ name: 'documentsInChildProcess', create: async () => ({ port: shared.converter }) });

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const gone = async (pid: number) => {
  while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
};
const failure = (promise: Promise<unknown>) => promise.then(() => { throw new Error('expected a rejection'); }, (error: unknown) => error);

describe('documentsInChildProcess', () => {
  const twoPages = buildPdf([{ text: ['The harbor opens at dawn.'] }, { text: ['The lighthouse keeper rings at noon.'] }]);
  let documents: DocumentsProcess | undefined;
  afterEach(async () => {
    await documents?.close();
    documents = undefined;
  });

  it('converts a PDF in a child that exits once idle, with the result of the in-process converter', async () => {
    documents = documentsInChildProcess({ idleMs: 0 });
    const converting = documents.converter.convert({ bytes: twoPages, filename: 'harbor.pdf' });
    const pid = documents.childPid();
    expect(pid).not.toBeNull();
    expect(pid).not.toBe(process.pid);
    expect(await converting).toEqual(await documentConverter().convert({ bytes: twoPages, filename: 'harbor.pdf' }));
    await gone(pid!);
    expect(documents.childPid()).toBeNull();
    // The next PDF starts another child.
    expect((await documents.converter.inspect({ bytes: twoPages, filename: 'harbor.pdf' })).pageCount).toBe(2);
  });

  it('reads HTML and the text formats in this process, without a child', async () => {
    documents = documentsInChildProcess();
    const html = new TextEncoder().encode('<html><body><main><h1>Harbor</h1><p>The harbor opens at dawn.</p></main></body></html>');
    expect((await documents.converter.convert({ bytes: html, filename: 'a.html' })).format).toBe('html');
    expect((await documents.converter.convert({ bytes: new TextEncoder().encode('# Harbor\n\nOpens at dawn.\n'), filename: 'a.md' })).format).toBe('markdown');
    expect(documents.childPid()).toBeNull();
  });

  it('reads scanned pages with tesseract in the child when given its own OCR port', async () => {
    documents = documentsInChildProcess();
    const jpeg = await textImage(['Invoice 2024-001', 'Total 123.45 EUR']);
    const scan = buildPdf([{ image: { jpeg, pixelWidth: 900, pixelHeight: 220, box: [36, 250, 540, 300] } }]);
    const doc = await documents.converter.convert({ bytes: scan, filename: 'scan.pdf', ocr: documents.ocr });
    expect(doc.ocrPages).toEqual([1]);
    expect(doc.blocks.map((block) => block.text).join(' ')).toContain('123.45 EUR');
    expect((await documents.ocr.recognize({ image: await textPng(['Harbor opens at dawn']) })).text).toContain('Harbor');
  });

  it('fails the requests of a child that dies, and starts a new child for the next one', async () => {
    documents = documentsInChildProcess();
    const jpeg = await textImage(['Invoice 2024-001']);
    const scan = buildPdf([{ image: { jpeg, pixelWidth: 900, pixelHeight: 220, box: [36, 250, 540, 300] } }]);
    const converting = documents.converter.convert({ bytes: scan, filename: 'scan.pdf', ocr: documents.ocr });
    process.kill(documents.childPid()!, 'SIGKILL');
    const error = await failure(converting);
    // Not a ServiceError: the service reports it as ingestion_failed, as any converter crash.
    expect(isServiceError(error)).toBe(false);
    expect(String(error)).toMatch(/document conversion process ended/);
    expect((await documents.converter.convert({ bytes: twoPages, filename: 'harbor.pdf' })).pageCount).toBe(2);
  });

  it('kills a child that does not answer within timeoutMs: document_too_complex', async () => {
    documents = documentsInChildProcess({ killGraceMs: 0 });
    await documents.converter.inspect({ bytes: twoPages, filename: 'harbor.pdf' });
    const pid = documents.childPid()!;
    // A stopped process answers nothing, as one stuck in a synchronous loop.
    process.kill(pid, 'SIGSTOP');
    const error = await failure(documents.converter.convert({ bytes: twoPages, filename: 'harbor.pdf', limits: { timeoutMs: 100 } }));
    expect(isServiceError(error) && error.code).toBe('document_too_complex');
    await gone(pid);
  });

  it('close() rejects what is pending and refuses later calls', async () => {
    documents = documentsInChildProcess();
    const converting = failure(documents.converter.convert({ bytes: twoPages, filename: 'harbor.pdf' }));
    const pid = documents.childPid()!;
    await documents.close();
    const pendingError = await converting;
    expect(isServiceError(pendingError) && pendingError.code).toBe('service_unavailable');
    expect(isAlive(pid)).toBe(false);
    const later = await failure(documents.converter.convert({ bytes: twoPages, filename: 'harbor.pdf' }));
    expect(isServiceError(later) && later.code).toBe('service_unavailable');
  });
});
