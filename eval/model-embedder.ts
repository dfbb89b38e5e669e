/**
 * A team's own embedding model in the harness: the local sentence model (`serve --embedder …`) or
 * the OpenAI-compatible embedder the server uses
 * (`serve --embedding-url … --embedding-model … --embedding-dimensions …`), configured by the same
 * flags, the same `MEMORY_AGENTS_EMBEDDING_*` variables and the same key variables
 * (`MEMORY_AGENTS_EMBEDDING_API_KEY`, else `MEMORY_AGENTS_MODEL_API_KEY`), so a number measured here
 * is the retrieval a server with that model gives.
 */
import type { Embedder } from '@memory-agents/core';

/** The harness flags of the model embedder (values; `--embedding-omit-dimensions` is a switch). */
export const MODEL_EMBEDDER_FLAGS = ['embedder', 'embedding-url', 'embedding-model', 'embedding-dimensions'] as const;

/**
 * The model embedder the flags (or their environment variables) ask for, or null when none is
 * asked. Throws the server's message when they do not fit together.
 */
export async function modelEmbedder(flags: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv): Promise<(Embedder & { close?: () => Promise<void> }) | null> {
  const values = {
    ...Object.fromEntries(MODEL_EMBEDDER_FLAGS.filter((name) => flags.has(name)).map((name) => [name, flags.get(name)!])),
    ...(flags.has('embedding-omit-dimensions') ? { 'embedding-omit-dimensions': true } : {}),
  };
  // Only the embedding settings: a chat model configured for `serve` plays no part in retrieval.
  const embeddingEnv = Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('MEMORY_AGENTS_EMBEDDING_') || name === 'MEMORY_AGENTS_MODEL_API_KEY'));
  if (Object.keys(values).length === 0 && !Object.keys(embeddingEnv).some((name) => name !== 'MEMORY_AGENTS_MODEL_API_KEY' && name !== 'MEMORY_AGENTS_EMBEDDING_API_KEY')) return null;
  const { modelSettings, createServiceModels } = await import('@memory-agents/server');
  const settings = modelSettings(values, embeddingEnv);
  if (!settings.embedding && !settings.local) {
    if (flags.get('embedder') === 'hashed') return null;
    throw new Error('--embedding-url, --embedding-dimensions and --embedding-omit-dimensions need --embedding-model');
  }
  const models = await createServiceModels(settings, embeddingEnv);
  return models.embedder ? { ...models.embedder, ...(models.close ? { close: models.close } : {}) } : null;
}
