import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PACKAGES, entryPoints } from '../../scripts/packages.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every module specifier a file imports (static `import ... from`, `export ... from`, dynamic `import()`). */
function importsOf(source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((match) => match[1]!);
}

/**
 * The keys a JSON text repeats within one object, as `path.key` (`dependencies.lru-cache`). A small
 * reader of its own: `JSON.parse` keeps the last of two equal keys without a word.
 */
function duplicateKeys(text: string): string[] {
  let at = 0;
  const found: string[] = [];
  const space = () => {
    while (/\s/.test(text[at] ?? '')) at++;
  };
  const string = (): string => {
    const start = at;
    at++;
    while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const value = (path: string): void => {
    space();
    if (text[at] === '{') {
      at++;
      const keys = new Set<string>();
      space();
      while (text[at] !== '}') {
        space();
        const key = string();
        if (keys.has(key)) found.push(path ? `${path}.${key}` : key);
        keys.add(key);
        space();
        at++; // ':'
        value(path ? `${path}.${key}` : key);
        space();
        if (text[at] === ',') at++;
        space();
      }
      at++;
    } else if (text[at] === '[') {
      at++;
      space();
      while (text[at] !== ']') {
        value(path);
        space();
        if (text[at] === ',') at++;
        space();
      }
      at++;
    } else if (text[at] === '"') {
      string();
    } else {
      while (at < text.length && !/[\s,\]}]/.test(text[at]!)) at++;
    }
  };
  JSON.parse(text); // well-formed first, so the reader above only has to walk it
  value('');
  return found;
}

describe('repository layout', () => {
  it('bench/ and eval/ use the packages through their public entry points only', async () => {
    const offending: string[] = [];
    for (const folder of ['bench', 'eval']) {
      for (const name of await readdir(join(ROOT, folder))) {
        if (!/\.(ts|mjs)$/.test(name)) continue;
        for (const specifier of importsOf(await readFile(join(ROOT, folder, name), 'utf8'))) {
          if (/(^|\/)packages\//.test(specifier) || /^@memory-agents\/[^/]+\/(src|dist)\//.test(specifier)) offending.push(`${folder}/${name}: ${specifier}`);
        }
      }
    }
    expect(offending).toEqual([]);
  });

  describe('the package list (scripts/packages.mjs) and the JSON files that cannot import it', () => {
    const json = async (path: string) => JSON.parse(await readFile(join(ROOT, path), 'utf8'));

    it('names every folder under packages/ that holds a package.json, once', async () => {
      const folders: string[] = [];
      for (const entry of await readdir(join(ROOT, 'packages'), { withFileTypes: true })) {
        if (entry.isDirectory() && (await readdir(join(ROOT, 'packages', entry.name))).includes('package.json')) folders.push(entry.name);
      }
      expect([...PACKAGES].sort()).toEqual(folders.sort());
      expect(new Set(PACKAGES).size).toBe(PACKAGES.length);
    });

    it('is in build order: every package comes after the workspace packages it depends on', async () => {
      for (const [position, name] of PACKAGES.entries()) {
        const manifest = await json(`packages/${name}/package.json`);
        expect(manifest.name).toBe(`@memory-agents/${name}`);
        const uses = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.devDependencies }).filter((dependency) => dependency.startsWith('@memory-agents/'));
        for (const dependency of uses) expect({ name, dependency, before: PACKAGES.indexOf(dependency.slice('@memory-agents/'.length)) < position }).toEqual({ name, dependency, before: true });
      }
    });

    it('root package.json workspaces are the packages, examples and test', async () => {
      const workspaces: string[] = (await json('package.json')).workspaces;
      expect([...workspaces].sort()).toEqual([...PACKAGES.map((name) => `packages/${name}`), 'examples', 'test'].sort());
    });

    it('no package.json names a key twice in one object (JSON.parse keeps the last silently; esbuild warns on every build)', async () => {
      const manifests = ['package.json', 'examples/package.json', 'test/package.json', ...PACKAGES.map((name) => `packages/${name}/package.json`)];
      const repeated: string[] = [];
      for (const path of manifests) {
        for (const key of duplicateKeys(await readFile(join(ROOT, path), 'utf8'))) repeated.push(`${path}: ${key}`);
      }
      expect(repeated).toEqual([]);
    });

    it('tsconfig.json paths resolve every published entry point to the source vitest and tsx use', async () => {
      const paths: Record<string, string[]> = (await json('tsconfig.json')).compilerOptions.paths;
      const resolve = (specifier: string): string | undefined => {
        if (paths[specifier]) return paths[specifier][0];
        const pattern = Object.keys(paths).find((key) => key.endsWith('*') && specifier.startsWith(key.slice(0, -1)));
        return pattern === undefined ? undefined : paths[pattern]![0]!.replace('*', specifier.slice(pattern.length - 1));
      };
      const entries = PACKAGES.flatMap(entryPoints);
      expect(entries.length).toBeGreaterThan(PACKAGES.length);
      for (const { specifier, source } of entries) expect({ specifier, resolved: resolve(specifier) }).toEqual({ specifier, resolved: source });
    });
  });

  describe('the Store areas (issue 40): one file each, under the same name, in every place that implements or tests them', () => {
    const PLACES = ['packages/core/src/in-memory/store', 'packages/adapter-postgres/src/store', 'packages/core/src/testing/conformance/store'];
    /** Files of a place that are not areas: the place's own plumbing. Anything else there must be an area of the port. */
    const NOT_AREAS = new Set(['index.ts', 'state.ts', 'rows.ts', 'harness.ts', 'records.ts', 'types.ts']);
    const kebab = (area: string) => area.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
    const portAreas = async () => {
      const source = await readFile(join(ROOT, 'packages/core/src/ports/store/index.ts'), 'utf8');
      const block = /export type StoreAreas = \{([\s\S]*?)\n\};/.exec(source)![1]!;
      return [...block.matchAll(/readonly (\w+):/g)].map((match) => match[1]!);
    };
    const filesOf = async (place: string) => (await readdir(join(ROOT, place))).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));

    it('ports/store has one file per StoreAreas member, and every implementation and the conformance suite mirror it', async () => {
      const areas = (await portAreas()).map((area) => `${kebab(area)}.ts`).sort();
      expect(areas.length).toBeGreaterThan(10);
      expect((await filesOf('packages/core/src/ports/store')).filter((file) => file !== 'index.ts').sort()).toEqual(areas);
      for (const place of PLACES) {
        const files = await filesOf(place);
        expect({ place, missing: areas.filter((area) => !files.includes(area)) }).toEqual({ place, missing: [] });
        expect({ place, strays: files.filter((file) => !areas.includes(file) && !NOT_AREAS.has(file)) }).toEqual({ place, strays: [] });
      }
    });

    it('docs/architecture.md names every area, and no other', async () => {
      const text = await readFile(join(ROOT, 'docs/architecture.md'), 'utf8');
      const listed = /The Store's areas \(([^)]*)\)/.exec(text.replace(/\n/g, ' '))![1]!.split(',').map((name) => name.trim().replace(/^and /, ''));
      expect(listed.sort()).toEqual((await portAreas()).sort());
    });
  });
});
