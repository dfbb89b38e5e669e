import { describe, expect, it } from 'vitest';
import { buildPdf, buildDocx, docxParagraph } from '../testing/conformance/document-converter/build-documents.js';
import { learningService } from '../__fixtures__/learning-service.js';
import { isServiceError } from '../errors/index.js';

const file = (filename: string, data: Uint8Array) => ({ file: { filename, mediaType: null, data }, fields: {} });

describe('observe-file without a documentConverter (core alone)', () => {
  it('reads the text formats with the built-in converter', async () => {
    const { service, owner, agentId, threadId } = await learningService();
    const accepted = await service.observeFile({ caller: owner, agentId, threadId, ...file('notes.md', new TextEncoder().encode('# Harbor\n\nThe harbor opens at dawn.\n')) });
    expect(accepted).toMatchObject({ doc_format: 'markdown', deferred: false });
    await service.stop();
  });

  it('refuses PDF, Word and HTML with unsupported_document and says which package reads them', async () => {
    const { service, owner, agentId, threadId } = await learningService();
    const uploads = [
      file('paper.pdf', buildPdf([{ text: ['The harbor opens at dawn.'] }])),
      file('memo.docx', buildDocx(docxParagraph('The harbor opens at dawn.'))),
      file('page.html', new TextEncoder().encode('<!doctype html><html><body><p>The harbor opens at dawn.</p></body></html>')),
    ];
    for (const upload of uploads) {
      const error = await service.observeFile({ caller: owner, agentId, threadId, ...upload }).catch((caught: unknown) => caught);
      expect(isServiceError(error) && error.code).toBe('unsupported_document');
      expect(isServiceError(error) && error.status).toBe(400);
      expect(String((error as Error).message)).toMatch(/documentConverter.*@memory-agents\/documents/);
    }
    await service.stop();
  });

  it('refuses a non-document naming the formats core reads, not the ones it does not', async () => {
    const { service, owner, agentId, threadId } = await learningService();
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    const error = await service.observeFile({ caller: owner, agentId, threadId, ...file('photo.png', png) }).catch((caught: unknown) => caught);
    expect(isServiceError(error) && error.code).toBe('unsupported_document');
    expect((error as Error).message).toBe(
      'This file is a PNG image, which cannot be converted; send a Markdown, text, source code, CSV or JSON file (PDF, Word and HTML need a document converter: `documentConverter()` from @memory-agents/documents).',
    );
    await service.stop();
  });
});
