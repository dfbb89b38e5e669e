import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * `@memory-agents/http/fetch` is advertised for Bun, Deno and edge runtimes: its module graph
 * (this package's files, the core's, and every package they import) must not reach `node:stream`
 * or busboy. The graph is the one a bundler builds from the entry (esbuild's metafile).
 */
describe('the fetch entry', () => {
  it('has no node:stream and no busboy in its module graph, and no node: module in this package', async () => {
    const result = await build({
      entryPoints: [here('./fetch.ts')],
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      logLevel: 'silent',
      // Resolve the core from its sources (as the tests do), so its graph is checked too.
      alias: { '@memory-agents/core': here('../../core/src/index.ts'), '@memory-agents/core/contract': here('../../core/src/contract/index.ts') },
      // Node built-ins stay imports: they are what is looked for.
      external: ['node:*'],
      plugins: [
        {
          name: 'bare-builtins',
          setup(context) {
            // A built-in imported without the `node:` prefix (`stream`, `crypto`) is one too.
            const builtins = new Set(['stream', 'crypto', 'fs', 'path', 'os', 'http', 'net', 'buffer', 'events', 'util', 'url', 'zlib', 'module', 'child_process']);
            context.onResolve({ filter: /^[a-z_]+$/ }, (args) => (builtins.has(args.path) ? { path: `node:${args.path}`, external: true } : undefined));
          },
        },
      ],
    });
    const inputs = result.metafile.inputs;
    const files = Object.keys(inputs);
    expect(files.some((file) => file.endsWith('packages/http/src/create-fetch-handler.ts'))).toBe(true);
    expect(files.some((file) => file.includes('@remix-run/multipart-parser'))).toBe(true);
    expect(files.filter((file) => /busboy|streamsearch/.test(file))).toEqual([]);
    const imports = Object.entries(inputs).flatMap(([file, input]) => input.imports.filter((entry) => entry.external).map((entry) => ({ file, path: entry.path })));
    expect(imports.filter(({ path }) => path === 'node:stream' || path.startsWith('node:stream/'))).toEqual([]);
    expect(imports.filter(({ file, path }) => file.includes('packages/http/') && path.startsWith('node:'))).toEqual([]);
  });
});
