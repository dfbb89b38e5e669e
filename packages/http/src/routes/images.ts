import { schemas } from '@memory-agents/core';
import { route } from '../route.js';

export const imageRoutes = [
  route({
    method: 'POST',
    path: '/v1/images',
    operationId: 'uploadImage',
    tag: 'Images',
    rateLimit: 'image_upload',
    summary: 'Upload an image (PNG, JPEG or WebP) for chat `images`; 201 with its img_ id',
    status: 201,
    upload: {
      maxFileBytes: (caller) => caller.limits.maxImageBytes,
      tooLargeCode: 'payload_too_large',
      fields: [],
      form: schemas.imageUploadForm,
    },
    response: schemas.imageUploaded,
    codes: ['payload_too_large'],
    handler: async ({ service, caller, upload }) => ({
      body: await service.images.upload({ caller, file: upload?.file ?? null }),
    }),
  }),
];
