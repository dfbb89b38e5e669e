export { hashedNgramEmbedder, type HashedNgramEmbedderOptions } from './hashed-ngram-embedder.js';
export { analyze, analyzeQuery, detectLanguage, tokenize, stem, isStopWord, STOP_WORDS, TEXT_LANGUAGES, type TextLanguage } from './text-analysis.js';
