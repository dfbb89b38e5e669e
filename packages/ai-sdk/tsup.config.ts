import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  external: ['@memory-agents/client', 'ai', /^@ai-sdk\//, 'zod'],
  // The memory-data fence (issue 33) is core's, bundled in: the middleware keeps `@memory-agents/client`
  // as its only runtime package of this repo, and no `node:` import reaches edge runtimes.
  noExternal: [/^@memory-agents\/core/],
});
