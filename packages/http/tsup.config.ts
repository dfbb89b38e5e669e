import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', fetch: 'src/fetch.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: [/^@memory-agents\//],
});
