import { describeError } from '../service/logger.js';
import type { UploadRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { sourceBlobKey } from './read-document.js';

/** The stored originals of uploads (what document citations link to), in the blob store. */
export function createOriginals(context: ServiceContext) {
  return {
    /** Stores the bytes; false when the blob store failed (the upload still succeeds, with `source_id` ""). */
    async store(organizationId: string, sourceId: string, data: Uint8Array, mediaType: string): Promise<boolean> {
      try {
        await context.blobs.put({ key: sourceBlobKey(organizationId, sourceId), data, mediaType });
        return true;
      } catch (error) {
        // Spec "Document ingest response": ingestion still succeeds, with `source_id` "".
        context.logger.warn('original document not stored', { sourceId, error: describeError(error) });
        return false;
      }
    },

    /** The stored bytes of an upload, or null when none were stored or they cannot be read. */
    async load(record: UploadRecord): Promise<Uint8Array | null> {
      if (!record.stored) return null;
      try {
        return (await context.blobs.get({ key: sourceBlobKey(record.organizationId, record.sourceId) }))?.data ?? null;
      } catch (error) {
        context.logger.warn('original document not readable', { sourceId: record.sourceId, error: describeError(error) });
        return null;
      }
    },
  };
}

export type Originals = ReturnType<typeof createOriginals>;
