import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests resolve workspace packages to their sources, so a unit test never runs stale `dist/`.
// The end-to-end tests in test/ start the built CLI (`packages/server/dist/cli.js`) as a user would.
const alias = [
  { find: /^@memory-agents\/core\/testing$/, replacement: src('./packages/core/src/testing/index.ts') },
  { find: /^@memory-agents\/core$/, replacement: src('./packages/core/src/index.ts') },
  { find: /^@memory-agents\/http$/, replacement: src('./packages/http/src/index.ts') },
  { find: /^@memory-agents\/client\/node$/, replacement: src('./packages/client/src/node.ts') },
  { find: /^@memory-agents\/client$/, replacement: src('./packages/client/src/index.ts') },
  { find: /^@memory-agents\/adapter-postgres$/, replacement: src('./packages/adapter-postgres/src/index.ts') },
  { find: /^@memory-agents\/adapter-lancedb$/, replacement: src('./packages/adapter-lancedb/src/index.ts') },
  { find: /^@memory-agents\/ocr-tesseract$/, replacement: src('./packages/ocr-tesseract/src/index.ts') },
  { find: /^@memory-agents\/models-openai$/, replacement: src('./packages/models-openai/src/index.ts') },
  { find: /^@memory-agents\/ai-sdk$/, replacement: src('./packages/ai-sdk/src/index.ts') },
  { find: /^@memory-agents\/server$/, replacement: src('./packages/server/src/index.ts') },
];

const project = (name: string, root: string) => ({
  extends: true as const,
  test: { name, include: [`${root}/**/*.test.ts`], exclude: ['**/node_modules/**', '**/dist/**'] },
});

export default defineConfig({
  resolve: { alias },
  test: {
    // Generous: CI shares 2 cores between test files; a slow machine must slow tests, not fail them.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    projects: [
      project('core', 'packages/core/src'),
      project('adapter-postgres', 'packages/adapter-postgres/src'),
      project('adapter-lancedb', 'packages/adapter-lancedb/src'),
      project('ocr-tesseract', 'packages/ocr-tesseract/src'),
      project('models-openai', 'packages/models-openai/src'),
      project('http', 'packages/http/src'),
      project('client', 'packages/client/src'),
      project('server', 'packages/server/src'),
      project('ai-sdk', 'packages/ai-sdk/src'),
      project('e2e', 'test'),
      project('examples', 'examples'),
      project('eval', 'eval'),
    ],
  },
});
