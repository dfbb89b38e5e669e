export {
  chunkDocument,
  resolveChunkOptions,
  DEFAULT_CHUNK_STRATEGY,
  DEFAULT_MAX_CHARS,
  DEFAULT_OVERLAP_CHARS,
  MAX_MAX_CHARS,
  MIN_MAX_CHARS,
  type ChunkOptions,
  type ChunkStrategy,
  type Piece,
} from './chunk-document.js';
export { BLOCK_SEPARATOR, documentText } from './document-text.js';
