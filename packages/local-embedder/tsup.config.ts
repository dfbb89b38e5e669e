import { defineConfig } from 'tsup';

export default defineConfig({
  // The worker is its own entry: the embedder starts it from dist/model-worker.js beside index.js.
  entry: { index: 'src/index.ts', 'model-worker': 'src/model-worker.ts' },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: [/^@memory-agents\//, 'onnxruntime-node', '@huggingface/tokenizers', 'lru-cache'],
});
