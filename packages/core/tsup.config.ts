import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', adapter: 'src/adapter.ts', testing: 'src/testing/index.ts', boundary: 'src/boundary/index.ts', contract: 'src/contract/index.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: ['vitest'],
});
