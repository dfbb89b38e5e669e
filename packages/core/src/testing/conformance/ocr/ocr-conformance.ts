import { describe, expect, it } from 'vitest';
import type { Ocr } from '../../../ports/ocr.js';
import { renderTextImage } from './render-text-image.js';

/** What `create()` of {@link describeOcrConformance} returns. */
export type OcrConformanceTarget = {
  /** The engine under test. The suite calls `close()` after each test. */
  port: Ocr;
  /** Runs after `close()`, even when a test fails. */
  cleanup?: () => Promise<void>;
};

/** Options of {@link describeOcrConformance}. */
export type OcrConformanceOptions = {
  /** Names the `describe` block, e.g. `'tesseractOcr'`. */
  name: string;
  /** Builds a fresh engine; called once per test. */
  create: () => Promise<OcrConformanceTarget>;
  /** Test titles to skip, e.g. `['abort: an already aborted signal rejects']`. */
  skip?: string[];
};

const SENTENCE = 'The quick brown fox jumps over the lazy dog';

/**
 * Registers a vitest suite that checks an {@link Ocr} against the port's contract, on PNGs rendered
 * with `@napi-rs/canvas`: a clear sentence is read, confidence stays in 0..100, bytes that are not
 * an image reject, parallel requests each get their own text, `signal` is honoured and `close()`
 * is idempotent. Recognition is judged on normalised words (lower case, punctuation dropped), so
 * an engine's line breaks and spacing do not matter.
 *
 * @example
 * ```ts
 * describeOcrConformance({ name: 'tesseractOcr', create: async () => ({ port: tesseractOcr() }) });
 * ```
 */
export function describeOcrConformance({ name, create, skip = [] }: OcrConformanceOptions): void {
  const test = (title: string, body: (port: Ocr) => Promise<void>) =>
    (skip.includes(title) ? it.skip : it)(title, () => withOcr(create, body));

  describe(name, () => {
    test('recognize: reads a clear rendered sentence', async (port) => {
      const image = await renderTextImage({ lines: [SENTENCE] });
      const { text } = await port.recognize({ image });
      expect(words(text)).toEqual(expect.arrayContaining(words(SENTENCE)));
    });

    test('recognize: confidence is between 0 and 100', async (port) => {
      for (const lines of [[SENTENCE], []]) {
        const { confidence } = await port.recognize({ image: await renderTextImage({ lines }) });
        expect(confidence).toBeGreaterThanOrEqual(0);
        expect(confidence).toBeLessThanOrEqual(100);
      }
      // A clean render of plain words is the easiest case there is.
      const { confidence } = await port.recognize({ image: await renderTextImage({ lines: [SENTENCE] }) });
      expect(confidence).toBeGreaterThan(50);
    });

    test('recognize: rejects bytes that are not an image', async (port) => {
      await expect(port.recognize({ image: new TextEncoder().encode('plain text, not an image') })).rejects.toThrow();
      await expect(port.recognize({ image: new Uint8Array(0) })).rejects.toThrow();
    });

    test('recognize: rejects a truncated image and keeps working', async (port) => {
      const image = await renderTextImage({ lines: [SENTENCE] });
      await expect(port.recognize({ image: image.subarray(0, 40) })).rejects.toThrow();
      const { text } = await port.recognize({ image });
      expect(words(text)).toEqual(expect.arrayContaining(words(SENTENCE)));
    });

    test('recognize: parallel requests each get their own text', async (port) => {
      const labels = ['alpha 1111', 'bravo 2222', 'charlie 3333', 'delta 4444', 'echo 5555'];
      const images = await Promise.all(labels.map((label) => renderTextImage({ lines: [`Label ${label}`] })));
      const results = await Promise.all(images.map((image) => port.recognize({ image })));
      results.forEach(({ text }, index) => {
        const found = words(text);
        labels.forEach((label, other) => {
          for (const word of words(label)) {
            if (other === index) expect(found).toContain(word);
            else expect(found).not.toContain(word);
          }
        });
      });
    });

    test('abort: an already aborted signal rejects', async (port) => {
      const image = await renderTextImage({ lines: [SENTENCE] });
      await expect(port.recognize({ image, signal: AbortSignal.abort() })).rejects.toThrow();
    });

    test('abort: a signal aborted after the call rejects and the engine keeps working', async (port) => {
      const image = await renderTextImage({ lines: [SENTENCE, SENTENCE, SENTENCE] });
      const controller = new AbortController();
      const pending = port.recognize({ image, signal: controller.signal });
      controller.abort();
      await expect(pending).rejects.toThrow();
      const { text } = await port.recognize({ image });
      expect(words(text)).toEqual(expect.arrayContaining(words(SENTENCE)));
    });

    test('close: is idempotent', async (port) => {
      await port.recognize({ image: await renderTextImage({ lines: ['close'] }) });
      await port.close?.();
      await port.close?.();
      await Promise.all([port.close?.(), port.close?.()]);
    });
  });
}

async function withOcr(create: OcrConformanceOptions['create'], body: (port: Ocr) => Promise<void>): Promise<void> {
  const { port, cleanup } = await create();
  try {
    await body(port);
  } finally {
    try {
      await port.close?.();
    } finally {
      await cleanup?.();
    }
  }
}

/** Lower-case words of letters and digits: what OCR output is compared on. */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}
