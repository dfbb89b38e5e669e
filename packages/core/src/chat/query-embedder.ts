import { ServiceError } from '../errors/index.js';
import type { Embedder } from '../ports/embedder.js';
import { LanguageModelError } from '../ports/language-model.js';
import type { MemoryIndex } from '../ports/memory-index.js';

/**
 * The embedder answering calls search with.
 *
 * - When the index was built by another embedder (an embedding model changed on an existing data
 *   dir), the query vector would not be comparable: the search runs on the full-text channel only.
 *   That is the case while the index is re-embedded for the service's embedder (issue 39: its
 *   fingerprint is the old one until the switch, and the semantic channel never compares vectors
 *   of two embedders), and for good with `reembedInBackground: false` (learning then reports
 *   `embedder_mismatch`). Read per call: the switch turns the semantic channel on at once.
 * - A provider that cannot be reached (a network embedder's `LanguageModelError`) is a dependency
 *   that did not respond: 503 `service_unavailable` (spec, Errors), not an internal error.
 */
export async function queryEmbedder(index: MemoryIndex, embedder: Embedder): Promise<Embedder> {
  const recorded = await index.embedder();
  const comparable = recorded === null || (recorded.id === embedder.id && recorded.dimensions === embedder.dimensions);
  return {
    specificationVersion: 'v1',
    id: embedder.id,
    dimensions: embedder.dimensions,
    ...(embedder.meaning ? { meaning: true } : {}),
    async embed(request) {
      // No vector: retrieval then searches without the semantic channel.
      if (!comparable) return { vectors: [] };
      try {
        return await embedder.embed(request);
      } catch (error) {
        if (error instanceof LanguageModelError || (error instanceof Error && error.name === 'LanguageModelError')) {
          throw new ServiceError('service_unavailable', 'The embedding model did not respond; wait a few seconds and send the request again.', { cause: error });
        }
        throw error;
      }
    },
  };
}
