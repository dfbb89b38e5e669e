import { copy, type State } from './state.js';
import type { ImageStore } from '../../ports/store/index.js';

/** Uploaded images in process memory. */
export function inMemoryImages(get: () => State): ImageStore {
  return {
    async insert({ image }) {
      const images = get().images;
      if (!images.has(image.id)) images.set(image.id, copy(image));
    },
    async get({ organizationId, imageId }) {
      const image = get().images.get(imageId);
      return image && image.organizationId === organizationId ? copy(image) : null;
    },
    async list({ organizationId, afterId, limit }) {
      return [...get().images.values()]
        .filter((image) => image.organizationId === organizationId && (afterId === undefined || image.id > afterId))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit)
        .map(copy);
    },
  };
}
