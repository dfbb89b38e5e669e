import { describe, expect, it } from 'vitest';
import { inMemoryBlobs, type LanguageModel } from '@memory-agents/core';
import { LanguageModelError, type GenerateRequest } from '@memory-agents/core/adapter';
// The service's figure pipeline (core internals) on a real converted DOCX: it needs this package's converter.
import type { ServiceContext } from '../../core/src/service/context.js';
import { describeFigures } from '../../core/src/sources/describe-figures.js';
import { readDocument } from '../../core/src/sources/read-document.js';
import { buildDocx, docxImage, docxParagraph, textPng } from './__fixtures__/generated-files.js';
import { documentConverter } from './document-converter.js';

/** A scripted double of the (external) model port: replies per call, recording each request. */
function scriptedModel(reply: (request: GenerateRequest, call: number) => Promise<string> | string): LanguageModel & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return {
    specificationVersion: 'v1',
    id: 'scripted-vision',
    requests,
    async generate(request) {
      requests.push(request);
      return { text: await reply(request, requests.length) };
    },
    async *stream() {
      throw new Error('not used');
    },
  };
}

const warnings: unknown[] = [];
const context = {
  ocr: null,
  converter: documentConverter(),
  blobs: inMemoryBlobs(),
  logger: { debug() {}, info() {}, warn: (...args: unknown[]) => warnings.push(args), error() {} },
  nowIso: () => '2026-01-01T00:00:00.000Z',
} as unknown as ServiceContext;

async function report(): Promise<Uint8Array> {
  const body = [
    docxParagraph('Intro paragraph.'),
    docxImage('rIdChart', 'Bar chart of sales'),
    docxParagraph('Figure 1. Sales by region. Source: finance.'),
    docxParagraph('Our team.'),
    docxImage('rIdPhoto', 'Team photo'),
    docxParagraph('The end.'),
  ].join('');
  return buildDocx(body, undefined, { rIdChart: await textPng(['North 40', 'South 60']), rIdPhoto: await textPng(['Team'], 300, 200) });
}

const read = async (bytes: Uint8Array, model?: LanguageModel, extra: { timeoutMs?: number } = {}) =>
  readDocument(context, {
    organizationId: 'org_1',
    sourceId: 'src_1',
    bytes,
    filename: 'report.docx',
    chunking: { strategy: 'structure', maxChars: 4000, overlapChars: 0 },
    ...(model ? { describeFigures: { model, ...extra } } : {}),
  });

describe('figure descriptions by a vision-capable model', () => {
  it("puts the model's description in the figure's turn, next to the caption, with the crop sent as an image part", async () => {
    const model = scriptedModel((request) => (request.messages.at(-1)?.content.includes('Figure 1') ? 'A bar chart: North 40, South 60.\n' : 'A [group] photo.'));
    const document = await read(await report(), model);
    const text = document.turns.map((turn) => turn.text).join('\n');
    expect(text).toContain('[Figure: Figure 1. Sales by region. Description: A bar chart: North 40, South 60]');
    expect(text).toContain('[Figure: Team photo. Description: A group photo]');
    expect(model.requests).toHaveLength(2);
    const image = model.requests[0]?.messages.at(-1)?.images?.[0];
    expect(image?.mediaType).toBe('image/png');
    expect(Array.from(image?.data.subarray(0, 4) ?? [])).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it('falls back to caption + OCR text per figure when the model fails or stalls, and never fails the upload', async () => {
    const model = scriptedModel((_request, call) => {
      if (call === 1) throw new LanguageModelError('unavailable', 'no vision here');
      return new Promise<string>(() => {}); // never answers: the per-call timeout ends it
    });
    warnings.length = 0;
    const document = await read(await report(), model, { timeoutMs: 50 });
    const text = document.turns.map((turn) => turn.text).join('\n');
    expect(text).toContain('[Figure: Figure 1. Sales by region]');
    expect(text).toContain('[Figure: Team photo]');
    expect(text).not.toContain('Description:');
    expect(warnings).toHaveLength(2);
  });

  it('without a describer (the offline default) keeps caption + OCR text and calls nothing', async () => {
    const document = await read(await report());
    expect(document.turns.map((turn) => turn.text).join('\n')).toContain('[Figure: Figure 1. Sales by region]');
  });

  it('bounds the calls: one per figure, at most `concurrency` at once', async () => {
    let open = 0;
    let most = 0;
    const model = scriptedModel(async () => {
      most = Math.max(most, ++open);
      await new Promise((resolve) => setTimeout(resolve, 10));
      open -= 1;
      return 'A figure.';
    });
    const figure = { page: 1, png: new Uint8Array([1]), width: 1, height: 1, caption: '', ocrText: '' };
    const document = { format: 'pdf' as const, mediaType: 'application/pdf', pageCount: 1, figures: Array.from({ length: 5 }, () => figure), figuresDropped: 0, ocrPages: [], blocks: Array.from({ length: 5 }, () => ({ kind: 'figure' as const, text: '[Figure (page 1)]', page: 1 })) };
    const described = await describeFigures(document, { model, concurrency: 2 }, context.logger);
    expect(model.requests).toHaveLength(5);
    expect(most).toBe(2);
    expect(described.blocks.map((block) => block.text)).toEqual(Array.from({ length: 5 }, () => '[Figure (page 1). Description: A figure]'));
  });
});
