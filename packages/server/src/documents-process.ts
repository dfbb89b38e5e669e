import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ServiceError,
  isServiceError,
  type ConvertDocumentLimits,
  type DocumentConverter,
  type ErrorCode,
  type Ocr,
} from '@memory-agents/core';
import {
  conversionTimeLimitError,
  detectFormat,
  resolveConvertLimits,
  type ConvertedDocument,
  type DocumentInspection,
  type OcrResult,
} from '@memory-agents/core/adapter';
import { DOCUMENT_FORMATS, documentConverter, type DocumentConverterOptions } from '@memory-agents/documents';

/** Options of {@link documentsInChildProcess}. */
export type DocumentsProcessOptions = {
  /** Options of the documents package's `documentConverter`, used in the child. */
  converter?: DocumentConverterOptions;
  /** Tesseract workers in the child (`tesseractOcr({ workers })`). @default tesseract's default */
  ocrWorkers?: number;
  /**
   * Milliseconds the child stays up after its last request settles; then it exits and gives its
   * memory (pdf.js, canvas, tesseract: ~300 MB after a PDF) back. The next PDF or DOCX starts a new
   * one (~0.3 s).
   * @default 5000
   */
  idleMs?: number;
  /**
   * Milliseconds after a request's `timeoutMs` budget before the child is killed: the child
   * enforces the budget itself, this catches a child whose event loop is stuck.
   * @default 5000
   */
  killGraceMs?: number;
};

/** The document converter and OCR ports served by one child process, and what stops it. */
export type DocumentsProcess = {
  /** Reads PDF and Word files in the child; HTML and the text formats in this process. */
  converter: DocumentConverter;
  /**
   * Tesseract OCR in the child. Handed to `convert` (as the service does with its `ocr`), scanned
   * pages are read where they are rendered; any other OCR port is called back in this process.
   */
  ocr: Ocr;
  /** The child's pid while it runs, else null. */
  childPid(): number | null;
  /** Kills the child and refuses later calls. Idempotent. */
  close(): Promise<void>;
};

/** @internal How the child gets the OCR of a conversion: its own tesseract, the caller's port through the parent, or none. */
export type OcrMode = 'child' | 'parent' | 'none';
/** @internal An error crossing the process boundary (`code` for a `ServiceError`). */
export type SerializedError = { name: string; message: string; code?: string };
/** @internal Messages to the child. */
export type ParentMessage =
  | { type: 'inspect'; id: number; bytes: Uint8Array; filename: string; limits?: ConvertDocumentLimits }
  | { type: 'convert'; id: number; bytes: Uint8Array; filename: string; limits?: ConvertDocumentLimits; ocr: OcrMode }
  | { type: 'recognize'; id: number; image: Uint8Array }
  | { type: 'abort'; id: number }
  | { type: 'ocr-result'; id: number; result?: OcrResult; error?: SerializedError };
/** @internal Messages from the child. */
export type ChildMessage =
  | { type: 'ready' }
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: SerializedError }
  | { type: 'ocr'; id: number; requestId: number; image: Uint8Array };

type Pending = {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** The caller's OCR port for `ocr` messages of this request. */
  ocr: Ocr | undefined;
  /** Aborted when the request settles: stops OCR calls made for it in this process. */
  done: AbortController;
  /** The child that holds the request. */
  child: ChildProcess;
};

type Running = { child: ChildProcess; ready: Promise<void> };

/** The child's entry: the built `documents-child.js` beside this module, or its source under vitest. */
function childEntry(): { path: string; execArgv: string[] } {
  const built = new URL('./documents-child.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return { path: fileURLToPath(built), execArgv: [] };
  return { path: fileURLToPath(new URL('./documents-child.ts', import.meta.url)), execArgv: ['--import', 'tsx'] };
}

/** The formats whose readers (pdf.js, mammoth, canvas) are heavy; the others are read in process. */
const CHILD_FORMATS = new Set(['pdf', 'docx']);

/**
 * PDF and Word conversion, and tesseract OCR, in a child Node process started on the first such
 * file and ended `idleMs` after its last request, so an idle server does not keep pdf.js, the
 * canvas and the OCR engines in memory. Same contract as the documents package's
 * `documentConverter` (same results, same `ServiceError` codes; an abort rejects with the signal's
 * reason at once and stops the work in the child); a child that dies or is stuck past the
 * request's `timeoutMs` fails the requests it held (`document_too_complex` for the stuck one) and
 * the next request starts a new child. HTML and the text formats are read in this process (no
 * heavy dependency). The child runs with Node's default flags (none of this process's `execArgv`).
 */
export function documentsInChildProcess(options: DocumentsProcessOptions = {}): DocumentsProcess {
  const idleMs = options.idleMs ?? 5000;
  const killGraceMs = options.killGraceMs ?? 5000;
  // Validates the options here, as `documentConverter` does, and reads the light formats.
  const local = documentConverter(options.converter ?? {});
  const pending = new Map<number, Pending>();
  let running: Running | null = null;
  let idleTimer: NodeJS.Timeout | undefined;
  let nextId = 1;
  let closed = false;

  const start = (): Running => {
    const entry = childEntry();
    const child = fork(entry.path, [JSON.stringify({ converter: options.converter ?? {}, ocrWorkers: options.ocrWorkers })], {
      execArgv: entry.execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let markReady: () => void = () => {};
    let fail: (error: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      fail = reject;
    });
    ready.catch(() => undefined);
    const current: Running = { child, ready };
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') return markReady();
      if (message.type === 'ocr') return void runCallerOcr(child, message);
      const request = pending.get(message.id);
      if (!request) return;
      if (message.type === 'result') request.resolve(message.value);
      else request.reject(deserializeError(message.error));
    });
    const gone = (why: string) => {
      if (running === current) running = null;
      const error = new Error(`The document conversion process ${why}.`);
      fail(error);
      // Every request this child held fails; the next one starts a new child.
      for (const [id, request] of pending) {
        if (request.child !== child) continue;
        pending.delete(id);
        request.reject(error);
      }
    };
    child.on('error', (error) => gone(`failed (${error.message})`));
    child.on('exit', (code, signal) => gone(`ended (${signal ?? `code ${code}`})`));
    return current;
  };

  const runCallerOcr = async (child: ChildProcess, message: { id: number; requestId: number; image: Uint8Array }) => {
    const request = pending.get(message.requestId);
    let reply: ParentMessage;
    try {
      if (!request?.ocr) throw new Error('The conversion that asked for OCR is over.');
      const result = await request.ocr.recognize({ image: message.image, signal: request.done.signal });
      reply = { type: 'ocr-result', id: message.id, result: { text: result.text, confidence: result.confidence } };
    } catch (error) {
      reply = { type: 'ocr-result', id: message.id, error: serializeError(error) };
    }
    if (child.connected) child.send(reply);
  };

  /** Sends one request to the child (started if needed) and settles with its answer. */
  const call = async <T>(message: DistributiveOmit<ParentMessage & { id: number }, 'id'>, signal: AbortSignal | undefined, ocr: Ocr | undefined, timeoutMs: number): Promise<T> => {
    if (closed) throw new ServiceError('service_unavailable', 'The document converter is closed.');
    signal?.throwIfAborted();
    clearTimeout(idleTimer);
    running ??= start();
    const { child, ready } = running;
    // A busy child keeps this process alive; an idle one does not (see below).
    child.ref();
    child.channel?.ref();
    const id = nextId++;
    const done = new AbortController();
    let watchdog: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    try {
      return await new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject, ocr, done, child });
        onAbort = () => {
          reject(signal!.reason);
          if (child.connected) child.send({ type: 'abort', id } satisfies ParentMessage);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        // The child bounds the work by `timeoutMs` itself; this is for a child that cannot answer.
        watchdog = setTimeout(() => {
          reject(timeoutError);
          child.kill('SIGKILL');
        }, timeoutMs + killGraceMs);
        const timeoutError = conversionTimeLimitError(resolveConvertLimits({ timeoutMs }));
        ready.then(
          () => child.connected && child.send({ ...message, id } as ParentMessage),
          (error: unknown) => reject(error),
        );
      });
    } finally {
      clearTimeout(watchdog);
      signal?.removeEventListener('abort', onAbort);
      done.abort();
      pending.delete(id);
      if (pending.size === 0 && running?.child === child && !closed) {
        child.unref();
        child.channel?.unref();
        idleTimer = setTimeout(() => {
          if (pending.size === 0 && running?.child === child) {
            running = null;
            child.disconnect();
          }
        }, idleMs);
        idleTimer.unref();
      }
    }
  };

  const timeoutOf = (limits: ConvertDocumentLimits | undefined) => resolveConvertLimits({ ...options.converter?.limits, ...limits }).timeoutMs;

  const ocrPort: Ocr = {
    specificationVersion: 'v1',
    id: 'tesseract-ocr',
    recognize: ({ image, signal }) => call<OcrResult>({ type: 'recognize', image }, signal, undefined, 300_000),
    close: () => close(),
  };

  const converter: DocumentConverter = {
    specificationVersion: 'v1',
    id: 'memory-agents-documents',
    formats: DOCUMENT_FORMATS,
    async inspect(request): Promise<DocumentInspection> {
      if (!CHILD_FORMATS.has(detectFormat(request.bytes, request.filename).format)) return local.inspect(request);
      const { bytes, filename, limits, signal } = request;
      return call({ type: 'inspect', bytes, filename, ...(limits ? { limits } : {}) }, signal, undefined, timeoutOf(limits));
    },
    async convert(request): Promise<ConvertedDocument> {
      if (!CHILD_FORMATS.has(detectFormat(request.bytes, request.filename).format)) return local.convert(request);
      const { bytes, filename, limits, signal, ocr } = request;
      const mode: OcrMode = ocr === undefined ? 'none' : ocr === ocrPort ? 'child' : 'parent';
      return call({ type: 'convert', bytes, filename, ocr: mode, ...(limits ? { limits } : {}) }, signal, mode === 'parent' ? ocr : undefined, timeoutOf(limits));
    },
  };

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      closed = true;
      clearTimeout(idleTimer);
      const current = running;
      running = null;
      for (const request of pending.values()) request.reject(new ServiceError('service_unavailable', 'The document converter is closed.'));
      pending.clear();
      if (current && current.child.exitCode === null && current.child.signalCode === null) {
        const exited = new Promise((resolve) => current.child.once('exit', resolve));
        current.child.kill('SIGKILL');
        await exited;
      }
    })());

  return { converter, ocr: ocrPort, childPid: () => running?.child.pid ?? null, close };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** @internal An error as it crosses the process boundary. */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  return { name: error.name, message: error.message, ...(isServiceError(error) ? { code: error.code } : {}) };
}

/** @internal The error a {@link SerializedError} stands for: a `ServiceError` keeps its code. */
export function deserializeError(error: SerializedError): Error {
  if (error.code !== undefined) return new ServiceError(error.code as ErrorCode, error.message);
  return Object.assign(new Error(error.message), { name: error.name });
}
