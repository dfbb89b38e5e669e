import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', cli: 'src/cli.ts', 'documents-child': 'src/documents-child.ts' },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: [/^@memory-agents\//],
  banner: ({ format }) => ({ js: format === 'esm' ? '' : '' }),
});
