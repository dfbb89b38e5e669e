import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PACKAGES, entryPoints } from './scripts/packages.mjs';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// Tests resolve workspace packages to their sources, so a unit test never runs stale `dist/`.
// The end-to-end tests in test/ start the built CLI (`packages/server/dist/cli.js`) as a user would.
const alias = PACKAGES.flatMap(entryPoints).map(({ specifier, source }) => ({ find: new RegExp(`^${escape(specifier)}$`), replacement: src(`./${source}`) }));

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
      ...PACKAGES.map((name) => project(name, `packages/${name}/src`)),
      project('e2e', 'test'),
      project('examples', 'examples'),
      project('eval', 'eval'),
    ],
  },
});
