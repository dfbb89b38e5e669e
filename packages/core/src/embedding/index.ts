export { hashedNgramEmbedder, type HashedNgramEmbedderOptions } from './hashed-ngram-embedder.js';
export { analyze, tokenize, stem, isStopWord, STOP_WORDS } from './text-analysis.js';
