import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import { ID_PATTERNS, contentId } from '../ids/index.js';
import type { ModelMessage } from '../ports/language-model.js';
import type { MemoryService } from '../memory-service.js';
import type { ImageUploadOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import type { ImageUploadRequest } from '../service/requests.js';
import { readImageHeader } from './image-header.js';

/** Blob key of an uploaded image. */
export const imageBlobKey = (organizationId: string, imageId: string) => `images/${organizationId}/${imageId}`;

/** `POST /v1/images` response body (DESIGN "Decisions"). */
export type ImageUploadedBody = { image_id: string; media_type: 'image/png' | 'image/jpeg' | 'image/webp'; bytes: number; width: number; height: number };

/** The images area: `service.images` and the images a chat turn names (`forChat`). */
export function createImages(context: ServiceContext) {
  const images = {
    /**
     * Stores an uploaded image: PNG, JPEG or WebP by magic bytes (422 otherwise), at most the
     * organization's `max_image_bytes` (413 `payload_too_large`). The `img_` id is the content hash
     * scoped to the organization, so the same bytes uploaded twice give the same id.
     */
    async upload({ caller, file }: ImageUploadRequest): Promise<ImageUploadOutput> {
      if (!file) throw new ServiceError('invalid_request', 'The form has no `file` part; send the image as the `file` field.', { status: 422 });
      if (file.data.length > caller.limits.maxImageBytes) {
        throw new ServiceError('payload_too_large', `The image is ${file.data.length} bytes; the limit is ${caller.limits.maxImageBytes}.`);
      }
      const header = readImageHeader(file.data);
      if (!header) throw new ServiceError('invalid_request', 'The image is not a PNG, JPEG or WebP file (judged by its bytes).', { status: 422 });
      const imageId = contentId('img_', caller.organizationId, file.data);
      await context.blobs.put({ key: imageBlobKey(caller.organizationId, imageId), data: file.data, mediaType: header.mediaType });
      await context.store.images.insert({
        image: { id: imageId, organizationId: caller.organizationId, mediaType: header.mediaType, bytes: file.data.length, width: header.width, height: header.height, createdAt: context.nowIso() },
      });
      return { image_id: imageId, media_type: header.mediaType, bytes: file.data.length, width: header.width, height: header.height };
    },
  } satisfies MemoryService['images'];

  return {
    images,

    /**
     * The images a chat turn names, loaded for the model: at most `max_images_per_turn` distinct
     * ids and `max_image_bytes_per_turn` bytes in total (413, refused rather than cut); an id the
     * organization did not upload is 404.
     */
    async forChat(caller: Caller, imageIds: readonly string[]): Promise<NonNullable<ModelMessage['images']>> {
      const distinct = [...new Set(imageIds)];
      if (distinct.length > caller.limits.maxImagesPerTurn) {
        throw new ServiceError('payload_too_large', `A chat turn may name at most ${caller.limits.maxImagesPerTurn} images; it named ${distinct.length}. Nothing was cut.`);
      }
      const records = [];
      for (const id of distinct) {
        const record = ID_PATTERNS.image.test(id) ? await context.store.images.get({ organizationId: caller.organizationId, imageId: id }) : null;
        if (!record) throw new ServiceError('not_found', `Image ${id} was not found.`);
        records.push(record);
      }
      const total = records.reduce((sum, record) => sum + record.bytes, 0);
      if (total > caller.limits.maxImageBytesPerTurn) {
        throw new ServiceError('payload_too_large', `The images of this turn total ${total} bytes; a turn may carry at most ${caller.limits.maxImageBytesPerTurn}.`);
      }
      const images: NonNullable<ModelMessage['images']> = [];
      for (const record of records) {
        const blob = await context.blobs.get({ key: imageBlobKey(caller.organizationId, record.id) });
        if (!blob) throw new ServiceError('not_found', `Image ${record.id} was not found.`);
        images.push({ mediaType: record.mediaType, data: blob.data });
      }
      return images;
    },
  };
}

export type Images = ReturnType<typeof createImages>;
