import * as schemas from '../schemas/index.js';
import { operation } from './operation.js';

export const images = {
  upload: operation({
    operationId: 'uploadImage',
    method: 'POST',
    path: '/v1/images',
    tag: 'Images',
    rateLimit: 'image_upload',
    summary: 'Upload an image (PNG, JPEG or WebP) for chat `images`; 201 with its img_ id',
    status: 201,
    upload: { limit: 'maxImageBytes', tooLargeCode: 'payload_too_large', fields: [], form: schemas.imageUploadForm },
    output: schemas.imageUploaded,
    codes: ['payload_too_large'],
  }),
};
