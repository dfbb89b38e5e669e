/**
 * Turns text into fixed-length vectors.
 *
 * Contract:
 * - `embed` MUST return exactly one vector per input text, in input order, each of length `dimensions`.
 * - The same text MUST give the same vector for the same `id` (the index relies on it).
 * - `id` MUST change whenever vectors would change (model, dimensions, normalisation): the memory
 *   index records it and refuses mixed embeddings (`embedder_mismatch`).
 * - On a network or provider failure it MUST reject; it MUST NOT return partial results.
 */
export type Embedder = {
  readonly specificationVersion: 'v1';
  /** Stable fingerprint, e.g. `hashed-ngrams-v1:384` or `openai:text-embedding-3-small:1536`. */
  readonly id: string;
  readonly dimensions: number;
  /**
   * True when near vectors mean texts about the same thing (a sentence model: the local embedder,
   * a provider's embedding model), not merely texts sharing letters (the hashed n-gram embedder).
   * Retrieval then weighs the vector channel as much as full text and prefers the newer of two
   * memories of one speaker that both answer a query by meaning (issue 39).
   * @default false
   */
  readonly meaning?: boolean;
  embed(request: EmbedRequest): Promise<EmbedResult>;
};

export type EmbedRequest = {
  texts: readonly string[];
  signal?: AbortSignal;
};

export type EmbedResult = {
  vectors: Float32Array[];
  /**
   * Input tokens the call used (issue 33, observation receipts), when the embedder knows them (a
   * network embedder; the built-in hashed embedder uses none). @default absent (not known)
   */
  usage?: { inputTokens: number };
};
