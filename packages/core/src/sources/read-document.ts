import { describeError } from '../service/logger.js';
import { chunkDocument, type ChunkStrategy } from '../chunking/index.js';
import { countWords } from '../credits/pricing.js';
import type { ConvertDocumentLimits, ConvertedDocument } from '../ports/document-converter.js';
import { ServiceError, isServiceError } from '../errors/index.js';
import type { NewTurn } from '../observations/new-job.js';
import type { ChunkingSettings } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { inSpan } from '../service/telemetry.js';
import { describeFigures, type FigureDescriberOptions } from './describe-figures.js';

/** Pieces one file may become (spec "Limits / Documents"). */
export const MAX_DOCUMENT_TURNS = 2000;

/** What reading a document produced: its turns and what the ingest response reports. */
export type ReadDocument = {
  format: string;
  mediaType: string;
  turns: NewTurn[];
  figures: number;
  figuresDropped: number;
  wordsTotal: number;
};

/** Blob key of a stored original. */
export const sourceBlobKey = (organizationId: string, sourceId: string) => `sources/${organizationId}/${sourceId}`;
/** Blob key of one figure crop of a stored original. */
export const figureBlobKey = (organizationId: string, sourceId: string, index: number) => `figures/${organizationId}/${sourceId}/${index + 1}`;

/**
 * Converts the bytes, cuts them into pieces and makes one turn per piece (speaker = filename, the
 * page kept for citations), storing figure crops on the way. Every failure is a `ServiceError`
 * with a document code: anything the converter throws that is not one becomes `ingestion_failed`.
 */
export async function readDocument(
  context: ServiceContext,
  input: {
    organizationId: string;
    sourceId: string;
    bytes: Uint8Array;
    filename: string;
    chunking: ChunkingSettings;
    limits?: ConvertDocumentLimits;
    signal?: AbortSignal;
    /** A vision-capable model describing each kept figure; without it figures keep caption + OCR text. */
    describeFigures?: FigureDescriberOptions;
  },
): Promise<ReadDocument> {
  let document: ConvertedDocument;
  try {
    // The span names the size, never the file name (tenant text).
    document = await inSpan('memory_agents.document.convert', { 'memory_agents.document.bytes': input.bytes.byteLength }, (span) =>
      context.converter
        .convert({
          bytes: input.bytes,
          filename: input.filename,
          ...(context.ocr ? { ocr: context.ocr } : {}),
          ...(input.signal ? { signal: input.signal } : {}),
          ...(input.limits ? { limits: input.limits } : {}),
        })
        .then((converted) => {
          span.setAttribute('memory_agents.document.blocks', converted.blocks.length);
          return converted;
        }),
    );
  } catch (error) {
    if (isServiceError(error)) throw error;
    if (error instanceof Error && error.name === 'AbortError') throw error;
    context.logger.warn('document conversion failed', { filename: input.filename, error: describeError(error) });
    throw new ServiceError('ingestion_failed', 'The document could not be converted; export it again or send another format.', { cause: error });
  }
  // Fails soft per figure (caption + OCR text kept); only an abort of the upload rejects.
  if (input.describeFigures) document = await describeFigures(document, input.describeFigures, context.logger, input.signal);
  const pieces = chunkDocument(document.blocks, {
    strategy: input.chunking.strategy as ChunkStrategy,
    maxChars: input.chunking.maxChars,
    overlapChars: input.chunking.overlapChars,
  });
  if (pieces.length > MAX_DOCUMENT_TURNS) {
    throw new ServiceError(
      'document_too_many_turns',
      `The document becomes ${pieces.length} pieces; one file may become at most ${MAX_DOCUMENT_TURNS}. Split it, or raise max_chars.`,
    );
  }
  if (pieces.length === 0) throw new ServiceError('empty_document', 'The document has no readable text; check that it is the file you meant to send.');
  await storeFigures(context, input.organizationId, input.sourceId, document);
  const now = context.nowIso();
  const turns: NewTurn[] = pieces.map((piece, index) => ({
    speaker: input.filename,
    text: piece.text,
    timestamp: now,
    tags: [],
    details: { sourceId: input.sourceId, page: piece.page, pageEnd: piece.pageEnd, filename: input.filename, piece: index },
  }));
  return {
    format: document.format,
    mediaType: document.mediaType,
    turns,
    figures: document.figures.length,
    figuresDropped: document.figuresDropped,
    // What `observe` bills for the same turns: the words of every turn, figure descriptions included.
    wordsTotal: turns.reduce((sum, turn) => sum + countWords(turn.text), 0),
  };
}

/** Figure crops go to the BlobStore; a storage failure loses the crop, never the upload. */
async function storeFigures(context: ServiceContext, organizationId: string, sourceId: string, document: ConvertedDocument): Promise<void> {
  for (const [index, figure] of document.figures.entries()) {
    try {
      await context.blobs.put({ key: figureBlobKey(organizationId, sourceId, index), data: figure.png, mediaType: 'image/png' });
    } catch (error) {
      context.logger.warn('figure crop not stored', { sourceId, figure: index + 1, error: describeError(error) });
    }
  }
}
