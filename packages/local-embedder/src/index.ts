// @memory-agents/local-embedder: sentence models exported to ONNX, run in process, as an Embedder.
export { localEmbedder, type LocalEmbedder, type LocalEmbedderOptions } from './local-embedder.js';
export { readModelFiles, sha256File, ModelFilesError, MANIFEST, type ModelFiles, type Pooling } from './model-files.js';
export { modelsDir, modelDirFor, resolveModel } from './model-cache.js';
