import type { Worker as ThreadWorker } from 'node:worker_threads';
import { renderTextImage } from '@memory-agents/core/testing';
import type { Worker as TesseractWorker } from 'tesseract.js';
import { describe, expect, it, vi } from 'vitest';
import { tesseractOcr } from './tesseract-ocr.js';

// Records every engine the pool starts, and counts recognitions sent to them, so a test can kill
// the thread behind an engine while it is busy.
const engines = vi.hoisted(() => [] as TesseractWorker[]);
const sent = vi.hoisted(() => ({ recognitions: 0 }));
vi.mock('tesseract.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('tesseract.js')>();
  return {
    ...actual,
    createWorker: async (...args: Parameters<typeof actual.createWorker>) => {
      const engine = await actual.createWorker(...args);
      const recognize = engine.recognize.bind(engine);
      engine.recognize = (...recognizeArgs) => {
        sent.recognitions += 1;
        return recognize(...recognizeArgs);
      };
      engines.push(engine);
      return engine;
    },
  };
});

const threadOf = (engine: TesseractWorker | undefined) => (engine as unknown as { worker: ThreadWorker }).worker;

describe('tesseractOcr when a worker thread dies', () => {
  it('rejects the request it was running and starts a new worker for the next', async () => {
    const ocr = tesseractOcr({ workers: 1 });
    try {
      const small = await renderTextImage({ lines: ['first'] });
      await ocr.recognize({ image: small });
      const page = await renderTextImage({ lines: Array.from({ length: 30 }, (_, index) => `Line ${index} keeps it busy`) });
      const before = sent.recognitions;
      const running = ocr.recognize({ image: page });
      await vi.waitFor(() => expect(sent.recognitions).toBe(before + 1), { interval: 5 });
      await threadOf(engines.at(-1)).terminate();
      await expect(running).rejects.toThrow(/exited/);
      await expect(ocr.recognize({ image: small })).resolves.toMatchObject({ text: 'first' });
      expect(engines).toHaveLength(2);
    } finally {
      await ocr.close?.();
    }
  });

  it('turns an error event of the thread into a rejection instead of a crash', async () => {
    const ocr = tesseractOcr({ workers: 1 });
    try {
      const image = await renderTextImage({ lines: ['second'] });
      await ocr.recognize({ image });
      const page = await renderTextImage({ lines: Array.from({ length: 30 }, (_, index) => `Line ${index} keeps it busy`) });
      const before = sent.recognitions;
      const running = ocr.recognize({ image: page });
      await vi.waitFor(() => expect(sent.recognitions).toBe(before + 1), { interval: 5 });
      threadOf(engines.at(-1)).emit('error', new Error('simulated worker failure'));
      await expect(running).rejects.toThrow(/crashed/);
      await expect(ocr.recognize({ image })).resolves.toMatchObject({ text: 'second' });
    } finally {
      await ocr.close?.();
    }
  });
});
