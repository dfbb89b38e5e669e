/**
 * An embedding cache for the harness (`--embedding-cache FILE`): a slow model (the local sentence
 * model embeds ~100-300 turns/s on 2 cores) is asked once per distinct text across runs, so trying
 * retrieval weights on LongMemEval takes seconds instead of minutes. Keyed by the embedder's id and
 * the text; the vectors are the model's own, so recall is the same as without the cache.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import type { Embedder } from '@memory-agents/core';

type CacheFile = { id: string; dimensions: number; texts: string[] };

/** `embedder` answered from `file` where it can; `save()` writes what was added. */
export async function cachedEmbedder(embedder: Embedder, file: string): Promise<Embedder & { save(): Promise<void> }> {
  const vectors = new Map<string, Float32Array>();
  if (existsSync(file) && existsSync(`${file}.f32`)) {
    const index = JSON.parse(await readFile(file, 'utf8')) as CacheFile;
    if (index.id === embedder.id && index.dimensions === embedder.dimensions) {
      const data = new Float32Array((await readFile(`${file}.f32`)).buffer.slice(0));
      index.texts.forEach((text, i) => vectors.set(text, data.slice(i * index.dimensions, (i + 1) * index.dimensions)));
    }
  }
  let added = false;
  return {
    specificationVersion: 'v1',
    id: embedder.id,
    dimensions: embedder.dimensions,
    ...(embedder.meaning ? { meaning: true } : {}),
    async embed(request) {
      const missing = [...new Set(request.texts.filter((text) => !vectors.has(text)))];
      if (missing.length > 0) {
        const result = await embedder.embed({ texts: missing, ...(request.signal ? { signal: request.signal } : {}) });
        missing.forEach((text, i) => vectors.set(text, result.vectors[i]!));
        added = true;
      }
      return { vectors: request.texts.map((text) => vectors.get(text)!) };
    },
    async save() {
      if (!added) return;
      const texts = [...vectors.keys()];
      const data = new Float32Array(texts.length * embedder.dimensions);
      texts.forEach((text, i) => data.set(vectors.get(text)!, i * embedder.dimensions));
      await writeFile(`${file}.f32`, new Uint8Array(data.buffer));
      await writeFile(file, JSON.stringify({ id: embedder.id, dimensions: embedder.dimensions, texts } satisfies CacheFile));
    },
  };
}
