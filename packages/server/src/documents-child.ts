/**
 * The child process behind `documentsInChildProcess` (documents-process.ts): runs the documents
 * package's converter (pdf.js, mammoth, canvas) and tesseract OCR for the server, so their memory
 * leaves with the process when it is idle. Speaks the messages of `ChildMessage` and `ParentMessage`
 * over the IPC channel (advanced serialization: byte arrays travel as they are).
 */
import type { DocumentConverterOptions } from '@memory-agents/documents';
import type { Ocr } from '@memory-agents/core';
import { deserializeError, serializeError, type ChildMessage, type OcrMode, type ParentMessage } from './documents-process.js';

const options = JSON.parse(process.argv[2] ?? '{}') as { converter?: DocumentConverterOptions; ocrWorkers?: number };
const send = (message: ChildMessage) => process.send!(message);

const { documentConverter } = await import('@memory-agents/documents');
const converter = documentConverter(options.converter ?? {});

let ownOcr: Promise<Ocr> | null = null;
/** Tesseract in this process, started on the first scanned page or figure. */
const tesseract = () =>
  (ownOcr ??= import('@memory-agents/ocr-tesseract').then(({ tesseractOcr }) => tesseractOcr(options.ocrWorkers === undefined ? {} : { workers: options.ocrWorkers })));

const running = new Map<number, AbortController>();
const parentOcrCalls = new Map<number, { resolve(result: { text: string; confidence: number }): void; reject(error: Error): void }>();
let nextOcrCall = 1;

/** The caller's own OCR port, in the parent: each image goes there and back. */
function parentOcr(requestId: number): Ocr {
  return {
    specificationVersion: 'v1',
    id: 'parent-ocr',
    recognize({ image, signal }) {
      signal?.throwIfAborted();
      const id = nextOcrCall++;
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          parentOcrCalls.delete(id);
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        parentOcrCalls.set(id, {
          resolve(result) {
            signal?.removeEventListener('abort', onAbort);
            resolve(result);
          },
          reject(error) {
            signal?.removeEventListener('abort', onAbort);
            reject(error);
          },
        });
        send({ type: 'ocr', id, requestId, image });
      });
    },
  };
}

async function ocrFor(mode: OcrMode, requestId: number): Promise<Ocr | undefined> {
  if (mode === 'child') return tesseract();
  if (mode === 'parent') return parentOcr(requestId);
  return undefined;
}

async function handle(message: ParentMessage): Promise<void> {
  if (message.type === 'abort') {
    running.get(message.id)?.abort(new DOMException('The operation was aborted.', 'AbortError'));
    return;
  }
  if (message.type === 'ocr-result') {
    const call = parentOcrCalls.get(message.id);
    parentOcrCalls.delete(message.id);
    if (message.error) call?.reject(deserializeError(message.error));
    else call?.resolve(message.result!);
    return;
  }
  const controller = new AbortController();
  running.set(message.id, controller);
  try {
    const { signal } = controller;
    let value: unknown;
    if (message.type === 'inspect') {
      value = await converter.inspect({ bytes: message.bytes, filename: message.filename, signal, ...(message.limits ? { limits: message.limits } : {}) });
    } else if (message.type === 'convert') {
      const ocr = await ocrFor(message.ocr, message.id);
      value = await converter.convert({ bytes: message.bytes, filename: message.filename, signal, ...(message.limits ? { limits: message.limits } : {}), ...(ocr ? { ocr } : {}) });
    } else {
      value = await (await tesseract()).recognize({ image: message.image, signal });
    }
    send({ type: 'result', id: message.id, value });
  } catch (error) {
    send({ type: 'error', id: message.id, error: serializeError(error) });
  } finally {
    running.delete(message.id);
  }
}

process.on('message', (message: ParentMessage) => void handle(message));
// The parent went away (or closed the channel when idle): nothing is left to do here.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
