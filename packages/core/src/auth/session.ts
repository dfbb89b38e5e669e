import type { SessionOutput } from '../schemas/outputs.js';
import { PARTNER_DISPLAY_NAME, type Caller } from './caller.js';

/** `GET /v1/session`: who the key resolves to and the organization's upload limits. */
export function describeSession(caller: Caller): SessionOutput {
  return {
    authenticated: true,
    user: { id: caller.subjectId, email: '', display_name: PARTNER_DISPLAY_NAME },
    organization_id: caller.organizationId,
    organization_name: caller.organizationName,
    max_upload_bytes: caller.limits.maxUploadBytes,
    max_image_bytes: caller.limits.maxImageBytes,
    max_images_per_turn: caller.limits.maxImagesPerTurn,
    max_image_bytes_per_turn: caller.limits.maxImageBytesPerTurn,
  };
}
