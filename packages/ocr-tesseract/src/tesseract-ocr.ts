import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Worker as ThreadWorker } from 'node:worker_threads';
import type { Ocr } from '@memory-agents/core';
import type { OcrRequest, OcrResult } from '@memory-agents/core/adapter';
import type { Worker as TesseractWorker } from 'tesseract.js';
import { z } from 'zod';

/** Options of {@link tesseractOcr}. */
export type TesseractOcrOptions = {
  /**
   * How many tesseract workers (threads, each holding its own engine of about 100–200 MB) may run
   * at once. Workers start on first demand and are reused; requests beyond this many wait in a
   * FIFO queue.
   * @default Math.max(1, os.availableParallelism() - 1)
   */
  workers?: number;
};

const optionsSchema = z.strictObject({
  workers: z.number().int().min(1).max(256).optional(),
});

/** Bounds a worker start that never settles (tesseract.js does that when it cannot load data). */
const WORKER_START_TIMEOUT_MS = 60_000;

/**
 * Offline OCR with tesseract.js (LSTM engine) and the English `best_int` data shipped in the
 * `@tesseract.js-data/eng` npm package. It never reaches the network and writes no files: the data
 * is read from `node_modules`, and nothing is cached on disk.
 *
 * - A pool of worker threads, at most `workers`, started lazily on first use and reused;
 *   requests beyond that wait in FIFO order.
 * - `recognize` rejects, and never hangs or takes the process down, when the input is not an
 *   image (checked by signature: PNG, JPEG, and the other formats the engine reads), when the
 *   engine fails, or when a worker thread dies. A failed worker is replaced on the next request.
 * - `signal` aborts a waiting request at once; a running one is stopped by terminating its worker
 *   (the engine cannot be interrupted), which frees the CPU. Both reject with an `AbortError`.
 * - `close()` terminates every worker, rejects pending requests, and is idempotent; later calls to
 *   `recognize` reject.
 *
 * @example
 * ```ts
 * const ocr = tesseractOcr({ workers: 2 });
 * const { text, confidence } = await ocr.recognize({ image: pngBytes });
 * await ocr.close();
 * ```
 */
export function tesseractOcr(options: TesseractOcrOptions = {}): Ocr {
  const { workers = Math.max(1, os.availableParallelism() - 1) } = optionsSchema.parse(options);
  const pool = createPool(workers);

  return {
    specificationVersion: 'v1',
    id: 'tesseract-ocr',

    async recognize({ image, signal }: OcrRequest): Promise<OcrResult> {
      if (signal?.aborted) throw abortError(signal);
      assertImage(image);
      // A worker can die between being handed over and being used; the request has not run
      // then, so it moves to another worker. (tesseract.js would hang on a terminated one.)
      for (let attempt = 1; ; attempt += 1) {
        const slot = await pool.acquire(signal);
        if (!slot.isLost) return pool.run(slot, image, signal);
        if (attempt >= 3) throw new Error('The tesseract workers kept stopping.');
      }
    },

    close: () => pool.close(),
  };
}

type Slot = {
  engine: TesseractWorker;
  /** The Node thread behind `engine`, when tesseract.js exposes it. */
  thread: ThreadWorker | undefined;
  /** Rejects once the worker is gone (crashed or terminated), failing the request it runs. */
  lost: Promise<never>;
  isLost: boolean;
  /** Terminates the worker; the request it runs rejects with `reason`. */
  destroy(reason: Error): void;
};

type Waiter = {
  resolve(slot: Slot): void;
  reject(error: Error): void;
};

function createPool(size: number) {
  const idle: Slot[] = [];
  const busy = new Set<Slot>();
  const starting = new Set<Promise<unknown>>();
  const waiters: Waiter[] = [];
  /** Workers alive or starting; never above `size`. */
  let live = 0;
  let isClosed = false;
  let closing: Promise<void> | undefined;

  const forget = (slot: Slot) => {
    busy.delete(slot);
    const index = idle.indexOf(slot);
    if (index >= 0) idle.splice(index, 1);
    live -= 1;
    // A replacement may start now for whoever waits.
    pump();
  };

  const pump = () => {
    while (waiters.length > 0 && !isClosed) {
      const slot = idle.pop();
      if (slot !== undefined) {
        busy.add(slot);
        slot.thread?.ref();
        waiters.shift()?.resolve(slot);
        continue;
      }
      if (live >= size) return;
      live += 1;
      const waiter = waiters.shift();
      const start = startSlot(forget).then(
        (started) => {
          if (isClosed) {
            started.destroy(closedError());
            waiter?.reject(closedError());
            return;
          }
          busy.add(started);
          waiter?.resolve(started);
        },
        (error: unknown) => {
          live -= 1;
          waiter?.reject(ocrError('The tesseract worker did not start.', error));
          pump();
        },
      );
      starting.add(start);
      void start.finally(() => starting.delete(start));
    }
  };

  const release = (slot: Slot) => {
    busy.delete(slot);
    if (slot.isLost) return;
    if (isClosed) {
      slot.destroy(closedError());
      return;
    }
    // An idle pool must not keep the process alive; a busy worker does, until it answers.
    slot.thread?.unref();
    idle.push(slot);
    pump();
  };

  return {
    acquire(signal: AbortSignal | undefined): Promise<Slot> {
      if (isClosed) return Promise.reject(closedError());
      return new Promise<Slot>((resolve, reject) => {
        let settled = false;
        const onAbort = () => {
          const index = waiters.indexOf(waiter);
          if (index >= 0) waiters.splice(index, 1);
          settle();
          reject(abortError(signal));
        };
        const settle = () => {
          settled = true;
          signal?.removeEventListener('abort', onAbort);
        };
        const waiter: Waiter = {
          resolve(slot) {
            // The caller gave up while this worker was starting: hand it to the next one.
            if (settled) return release(slot);
            settle();
            resolve(slot);
          },
          reject(error) {
            if (settled) return;
            settle();
            reject(error);
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.push(waiter);
        pump();
      });
    },

    async run(slot: Slot, image: Uint8Array, signal: AbortSignal | undefined): Promise<OcrResult> {
      if (signal?.aborted) {
        // Aborted while this worker was being handed over: nothing runs yet, so keep the worker.
        release(slot);
        throw abortError(signal);
      }
      let onAbort = () => {};
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(abortError(signal));
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      });
      aborted.catch(() => {});
      try {
        // tesseract.js treats a string as a path or URL, so only ever hand it bytes (a view, no copy).
        const bytes = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
        const { data } = await Promise.race([slot.engine.recognize(bytes), slot.lost, aborted]);
        release(slot);
        return {
          text: data.text.replace(/\s+$/, ''),
          confidence: Number.isFinite(data.confidence) ? Math.min(100, Math.max(0, data.confidence)) : 0,
        };
      } catch (error) {
        if (signal?.aborted && !slot.isLost) {
          // The engine cannot be interrupted; terminating the worker is the only way to stop it.
          slot.destroy(abortError(signal));
          throw abortError(signal);
        }
        if (slot.isLost) throw error instanceof Error ? error : ocrError('The tesseract worker stopped.', error);
        // The engine reported an error for this image; the worker itself is fine.
        release(slot);
        throw ocrError(`Tesseract could not recognize the image: ${String(error)}`, error);
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    },

    close(): Promise<void> {
      if (closing !== undefined) return closing;
      isClosed = true;
      closing = (async () => {
        for (const waiter of waiters.splice(0)) waiter.reject(closedError());
        for (const slot of [...idle, ...busy]) slot.destroy(closedError());
        // Workers still starting are terminated as soon as they are up (see `pump`).
        await Promise.allSettled([...starting]);
      })();
      return closing;
    },
  };
}

let langPath: string | undefined;

/** The `4.0.0_best_int` data directory inside the installed `@tesseract.js-data/eng`. */
function englishDataPath(): string {
  if (langPath === undefined) {
    const require = createRequire(import.meta.url);
    langPath = path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
  }
  return langPath;
}

async function startSlot(onGone: (slot: Slot) => void): Promise<Slot> {
  // `langPath`, `gzip` and `cacheMethod: 'none'` together keep tesseract.js offline and off the
  // disk (see shared/notes/dependencies.md). Without an `errorHandler`, tesseract.js throws an
  // engine error from a message listener, which would crash the process.
  // Loaded on the first OCR, not with the server: most servers never read a scan.
  const { createWorker, OEM, PSM } = await import('tesseract.js');
  const created = createWorker('eng', OEM.LSTM_ONLY, {
    langPath: englishDataPath(),
    gzip: true,
    cacheMethod: 'none',
    logger: () => {},
    errorHandler: () => {},
  });
  const starting = created.then(async (engine) => {
    try {
      await engine.setParameters({
        // The engine's library default is one uniform block, which reads a two-column page line by
        // line straight across both columns; automatic layout analysis keeps columns apart, as the
        // tesseract command line does (CER on the two-column linn.pdf: 37 % → 1 %).
        tessedit_pageseg_mode: PSM.AUTO,
        // Keeps "Estimating resolution as …" and similar engine chatter off our stderr.
        debug_file: '/dev/null',
      });
      return engine;
    } catch (error) {
      await engine.terminate().catch(() => {});
      throw error;
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`No worker after ${WORKER_START_TIMEOUT_MS} ms.`)), WORKER_START_TIMEOUT_MS);
  });
  let engine: TesseractWorker;
  try {
    engine = await Promise.race([starting, timeout]);
  } catch (error) {
    // A worker that starts after the deadline is terminated rather than leaked.
    starting.then((late) => late.terminate()).catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }

  let rejectLost: (reason: Error) => void = () => {};
  const lost = new Promise<never>((_, reject) => {
    rejectLost = reject;
  });
  lost.catch(() => {});

  // tesseract.js sets a browser-style `onerror` that Node never calls; without the listeners below
  // a crashed worker thread would leave its request pending forever (or, for 'error', crash us).
  const thread = (engine as unknown as { worker?: ThreadWorker }).worker;
  const slot: Slot = {
    engine,
    thread,
    lost,
    isLost: false,
    destroy(reason) {
      if (slot.isLost) return;
      slot.isLost = true;
      rejectLost(reason);
      void engine.terminate().catch(() => {});
      onGone(slot);
    },
  };

  thread?.on('error', (error) => slot.destroy(ocrError('The tesseract worker crashed.', error)));
  thread?.on('exit', (code) => slot.destroy(ocrError(`The tesseract worker exited (code ${code}).`, undefined)));
  return slot;
}

/**
 * Leading bytes of the formats Leptonica reads. Checking them first turns "not an image" into a
 * clear rejection without a trip to a worker.
 */
const SIGNATURES: ReadonlyArray<readonly number[]> = [
  [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], // PNG
  [0xff, 0xd8, 0xff], // JPEG
  [0x42, 0x4d], // BMP
  [0x47, 0x49, 0x46, 0x38], // GIF
  [0x49, 0x49, 0x2a, 0x00], // TIFF, little-endian
  [0x4d, 0x4d, 0x00, 0x2a], // TIFF, big-endian
];
/** WebP is a RIFF container with the `WEBP` form type at offset 8. */
const RIFF = [0x52, 0x49, 0x46, 0x46];

function assertImage(image: unknown): asserts image is Uint8Array {
  if (!(image instanceof Uint8Array)) throw new TypeError('`image` must be a Uint8Array of PNG or JPEG bytes.');
  const startsWith = (signature: readonly number[]) => signature.every((byte, index) => image[index] === byte);
  const isRiff = startsWith(RIFF);
  const isWebp = isRiff && String.fromCharCode(...image.subarray(8, 12)) === 'WEBP';
  const isPnm = image[0] === 0x50 && image[1] !== undefined && image[1] >= 0x31 && image[1] <= 0x36; // P1–P6
  if (!(SIGNATURES.some(startsWith) || isWebp || isPnm)) {
    throw ocrError('The input is not an image (expected PNG or JPEG bytes).', undefined);
  }
}

function ocrError(message: string, cause: unknown): Error {
  return cause === undefined ? new Error(message) : new Error(message, { cause });
}

function closedError(): Error {
  return new Error('The tesseract OCR was closed.');
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('The operation was aborted.', 'AbortError');
}
