import { defineConfig } from 'tsup';

export default defineConfig({
  // `index` uses only fetch and web streams (Node, Bun, Deno, edge); `node` adds file-path helpers.
  entry: { index: 'src/index.ts', node: 'src/node.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  external: [/^node:/, 'eventsource-parser'],
  // Deno and Bun want the node: prefix kept in the Node-only entry.
  removeNodeProtocol: false,
});
