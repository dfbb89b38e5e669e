// The workspace packages: the one list the root build, the vitest projects and aliases, and the
// layout test read. Adding a package is one line here (in build order: after every package it
// depends on), plus its entry in the root package.json `workspaces`, which
// test/foundation/layout.test.ts checks against this list (as it checks tsconfig.json `paths`).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Folder names under packages/, in build order. Each is published as `@memory-agents/<name>`. */
export const PACKAGES = ['core', 'adapter-postgres', 'adapter-lancedb', 'ocr-tesseract', 'documents', 'models-openai', 'local-embedder', 'http', 'client', 'ai-sdk', 'server'];

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * Every import path a package publishes (its package.json `exports`, `./package.json` aside) with the
 * source file it is built from: `./dist/node.js` from `src/node.ts`, else from the folder's index
 * (`./dist/testing.js` from `src/testing/index.ts`).
 * @returns {{ specifier: string, source: string }[]} `source` relative to the repository root
 */
export function entryPoints(name) {
  const manifest = JSON.parse(readFileSync(`${ROOT}packages/${name}/package.json`, 'utf8'));
  return Object.entries(manifest.exports ?? {})
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => {
      const built = typeof target === 'string' ? target : target.import ?? target.default;
      const file = `packages/${name}/${built.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')}`;
      const source = existsSync(`${ROOT}${file}`) ? file : file.replace(/\.ts$/, '/index.ts');
      return { specifier: `@memory-agents/${name}${subpath === '.' ? '' : subpath.slice(1)}`, source };
    });
}
