import { availableParallelism } from 'node:os';
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

// The AI SDK integration is tested against both majors its peer range accepts: `ai` 6 (the `ai` dev
// dependency) and `ai` 7 (installed as `ai-v7`, an npm alias), by running the same test files with
// `ai` and `ai/test` resolved to the other copy. ai 7 declares Node >= 22: on older Node the ai 7 run
// is left out with a one-line reason, except under CI=true, where nothing is silently left out.
const AI_SDK_TESTS = ['packages/ai-sdk/src/**/*.test.ts', 'test/ai-sdk/**/*.test.ts'];
const nodeMajor = Number(process.versions.node.split('.')[0]);
const runAiV7 = nodeMajor >= 22 || process.env.CI === 'true';
// The config is evaluated once per project: say it once per process.
const warned = globalThis as { __aiV7SkipSaid?: boolean };
if (!runAiV7 && !warned.__aiV7SkipSaid) {
  warned.__aiV7SkipSaid = true;
  console.warn(`[ai-sdk-v7] skipped: ai 7 needs Node >= 22, this is Node ${process.versions.node} (try: scripts/with-node.sh 22 npx vitest run --project ai-sdk-v7)`);
}
const aiV7 = {
  extends: true as const,
  resolve: {
    alias: [
      { find: /^ai$/, replacement: 'ai-v7' },
      { find: /^ai\/test$/, replacement: 'ai-v7/test' },
    ],
  },
  test: { name: 'ai-sdk-v7', env: { AI_SDK_MAJOR: '7' }, include: AI_SDK_TESTS, exclude: ['**/node_modules/**', '**/dist/**'] },
};

export default defineConfig({
  resolve: { alias },
  test: {
    // Generous: CI shares 2 cores between test files; a slow machine must slow tests, not fail them.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Two test files at a time even on 2 cores (vitest's default there is one): most files wait on
    // servers, databases and child processes, so the second core is idle otherwise. Measured: the
    // whole suite 1,920 s with one worker, 1,480 s with two on a busier machine, every file passing
    // (docs/decisions.md, "Two test files at a time").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      ...PACKAGES.map((name) => project(name, `packages/${name}/src`)),
      project('e2e', 'test'),
      project('examples', 'examples'),
      project('eval', 'eval'),
      ...(runAiV7 ? [aiV7] : []),
    ],
  },
});
