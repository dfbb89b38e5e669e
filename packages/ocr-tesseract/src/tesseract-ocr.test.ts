import { describeOcrConformance, renderTextImage } from '@memory-agents/core/testing';
import { describe, expect, it } from 'vitest';
import { tesseractOcr } from './tesseract-ocr.js';

describeOcrConformance({ name: 'tesseractOcr', create: async () => ({ port: tesseractOcr() }) });

describe('tesseractOcr', () => {
  it('validates its options without doing any work', () => {
    expect(() => tesseractOcr({ workers: 0 })).toThrow();
    expect(() => tesseractOcr({ workers: 1.5 })).toThrow();
    expect(() => tesseractOcr({ workers: 2, langPath: '/tmp' } as never)).toThrow();
    expect(tesseractOcr().id).toBe('tesseract-ocr');
  });

  it('rejects after close', async () => {
    const ocr = tesseractOcr({ workers: 1 });
    await ocr.close?.();
    await expect(ocr.recognize({ image: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) })).rejects.toThrow(/closed/);
  });

  it('runs requests on several workers and queues the rest', async () => {
    const ocr = tesseractOcr({ workers: 2 });
    try {
      const labels = ['golf 6161', 'hotel 7272', 'india 8383', 'juliet 9494'];
      const images = await Promise.all(labels.map((label) => renderTextImage({ lines: [label] })));
      const results = await Promise.all(images.map((image) => ocr.recognize({ image })));
      expect(results.map(({ text }) => text.toLowerCase())).toEqual(labels);
    } finally {
      await ocr.close?.();
    }
  });

  it('stops a running recognition on abort and replaces its worker', async () => {
    const ocr = tesseractOcr({ workers: 1 });
    try {
      const small = await renderTextImage({ lines: ['warm up'] });
      await ocr.recognize({ image: small }); // the worker now exists, so the next request runs at once
      const page = await renderTextImage({
        lines: Array.from({ length: 30 }, (_, index) => `Line ${index} of a long page that takes a while`),
      });
      const controller = new AbortController();
      const running = ocr.recognize({ image: page, signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await expect(running).rejects.toMatchObject({ name: 'AbortError' });
      await expect(ocr.recognize({ image: small })).resolves.toMatchObject({ text: 'warm up' });
    } finally {
      await ocr.close?.();
    }
  });

  it('rejects requests pending when it closes', async () => {
    const ocr = tesseractOcr({ workers: 1 });
    const image = await renderTextImage({ lines: ['pending'] });
    const settled = Promise.allSettled([ocr.recognize({ image }), ocr.recognize({ image })]);
    await ocr.close?.();
    for (const result of await settled) expect(result.status).toBe('rejected');
  });
});
