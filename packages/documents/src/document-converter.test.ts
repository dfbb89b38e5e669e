import { buildPdf, describeDocumentConverterConformance } from '@memory-agents/core/testing';
import { isServiceError } from '@memory-agents/core';
import { describe, expect, it } from 'vitest';
import { documentConverter } from './document-converter.js';

describeDocumentConverterConformance({ name: 'documentConverter', create: async () => ({ port: documentConverter() }) });

describe('documentConverter options', () => {
  const twoPages = buildPdf([{ text: ['The harbor opens at dawn.'] }, { text: ['The lighthouse keeper rings at noon.'] }]);
  const code = (error: unknown) => (isServiceError(error) ? error.code : String(error));

  it('applies its limits under the request limits: a field the request sets wins', async () => {
    const strict = documentConverter({ limits: { maxPages: 1 } });
    expect(code(await strict.convert({ bytes: twoPages, filename: 'a.pdf' }).catch((error: unknown) => error))).toBe('document_too_complex');
    expect((await strict.convert({ bytes: twoPages, filename: 'a.pdf', limits: { maxPages: 2 } })).pageCount).toBe(2);
  });

  it('refuses options that are not valid', () => {
    expect(() => documentConverter({ limits: { maxPages: -1 } })).toThrow();
    expect(() => documentConverter({ limits: { timeoutMs: 0 } })).toThrow();
    expect(() => documentConverter({ unknown: true } as never)).toThrow();
  });
});
