import { z } from 'zod';
import { CHUNK_STRATEGIES } from '../ports/store/index.js';
import { agentId, dateTime, imageId, observationId, sourceId, threadId } from './common.js';

const strategy = z.enum(CHUNK_STRATEGIES);

/**
 * The text fields of an `observe-file` form (multipart values are strings). `file` is the one
 * file part. Chunking ranges are checked by `resolveChunkOptions` (422 / 400 as the spec says).
 */
export const observeFileFields = z
  .object({
    allow_duplicate: z.enum(['true', 'false']).optional(),
    max_chars: z.string().regex(/^-?\d+$/, 'an integer').optional(),
    overlap_chars: z.string().regex(/^-?\d+$/, 'an integer').optional(),
    strategy: strategy.optional(),
  })
  .strict();

/** The multipart form of `observe-file`, for OpenAPI. */
export const observeFileForm = z
  .object({
    file: z.string().meta({ format: 'binary' }),
    allow_duplicate: z.boolean().optional(),
    max_chars: z.number().int().min(200).max(4000).optional(),
    overlap_chars: z.number().int().min(0).optional(),
    strategy: strategy.optional(),
  })
  .meta({ id: 'ObserveFileForm' });

/** Spec "Document ingest response" (observe-file and finish-learning). */
export const documentIngestResponse = z
  .object({
    agent_id: agentId,
    thread_id: threadId,
    observation_id: observationId,
    accepted: z.boolean(),
    turns_total: z.number().int().min(0),
    filename: z.string(),
    doc_format: z.string(),
    source_id: z.union([sourceId, z.literal('')]),
    deferred: z.boolean(),
    figures: z.number().int().min(0),
    figures_dropped: z.number().int().min(0),
    words_total: z.number().int().min(0),
    duplicate: z.boolean(),
    document_state: z.enum(['ingesting', 'partial', 'completed', 'failed']).optional(),
    queued: z.boolean(),
  })
  .strict()
  .meta({ id: 'DocumentIngestResponse' });

/** `finish-learning` body. */
export const finishLearningBody = z
  .object({
    here: z.boolean().optional(),
    max_chars: z.number().int().min(200).max(4000).optional(),
    overlap_chars: z.number().int().min(0).optional(),
    strategy: strategy.optional(),
  })
  .strict()
  .meta({ id: 'FinishLearningRequest' });

/** One entry of the sources listing (DESIGN "Decisions"). */
export const sourceEntry = z
  .object({
    source_id: z.union([sourceId, z.literal('')]),
    filename: z.string(),
    doc_format: z.string(),
    media_type: z.string(),
    bytes: z.number().int().min(0),
    document_state: z.enum(['ingesting', 'partial', 'completed', 'failed']),
    thread_id: threadId,
    observation_id: observationId,
    turns_total: z.number().int().min(0),
    turns_learned: z.number().int().min(0),
    can_finish: z.boolean(),
    created_at: dateTime,
  })
  .strict();

export const sourcesResponse = z.object({ sources: z.array(sourceEntry) }).strict().meta({ id: 'SourcesList' });

/** The stored original served back (binary; this schema only documents it). */
export const sourceBytes = z.string().meta({ format: 'binary', id: 'SourceBytes' });

/** The multipart form of an image upload, for OpenAPI. */
export const imageUploadForm = z.object({ file: z.string().meta({ format: 'binary' }) }).meta({ id: 'ImageUploadForm' });

/** `POST /v1/images` -> 201 (DESIGN "Decisions"). */
export const imageUploaded = z
  .object({
    image_id: imageId,
    media_type: z.enum(['image/png', 'image/jpeg', 'image/webp']),
    bytes: z.number().int().min(1),
    width: z.number().int().min(1),
    height: z.number().int().min(1),
  })
  .strict()
  .meta({ id: 'ImageUploaded' });
