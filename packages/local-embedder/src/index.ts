// @memory-agents/local-embedder: sentence models exported to ONNX, run in process, as an Embedder.
export { localEmbedder, type LocalEmbedder, type LocalEmbedderOptions } from './local-embedder.js';
export { readModelFiles, sha256File, ModelFilesError, MANIFEST, type ModelFiles, type Pooling } from './model-files.js';
export { modelsDir, modelDirFor, resolveModel, isModelName, listModels, readModelManifest, type CachedModel, type ModelFile, type ModelManifest } from './model-cache.js';
export { pullModel, PullError, isPullError, DEFAULT_HUB_ENDPOINT, DEFAULT_ONNX_FILE, type PullModelOptions, type PullModelResult, type PullProgress, type PullErrorCode } from './pull.js';
