import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { MANIFEST } from './model-files.js';

/** Where pulled models live: `MEMORY_AGENTS_MODELS_DIR`, else `$XDG_CACHE_HOME/memory-agents/models`, else `~/.cache/memory-agents/models`. */
export function modelsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MEMORY_AGENTS_MODELS_DIR) return resolve(env.MEMORY_AGENTS_MODELS_DIR);
  return join(env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache'), 'memory-agents', 'models');
}

const HUB_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The cache directory of a hub model id `owner/name`: `<modelsDir>/owner--name`. */
export function modelDirFor(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!HUB_ID.test(name) || name.includes('..')) throw new Error(`${JSON.stringify(name)} is not a model name of the form owner/name (e.g. sentence-transformers/all-MiniLM-L6-v2)`);
  return join(modelsDir(env), name.replace('/', '--'));
}

/**
 * The directory of a model given as a path (absolute, or starting with `.` or `~`) or as a hub id
 * pulled into the cache; throws a sentence saying how to get it when it is not there.
 */
export function resolveModel(nameOrPath: string, env: NodeJS.ProcessEnv = process.env): string {
  const isPath = isAbsolute(nameOrPath) || nameOrPath.startsWith('.') || nameOrPath.startsWith('~');
  if (isPath) {
    const path = nameOrPath.startsWith('~') ? join(homedir(), nameOrPath.slice(1)) : resolve(nameOrPath);
    if (!existsSync(path) || !statSync(path).isDirectory()) throw new Error(`The model directory ${path} does not exist.`);
    return path;
  }
  const dir = HUB_ID.test(nameOrPath) ? modelDirFor(nameOrPath, env) : join(modelsDir(env), nameOrPath);
  if (!existsSync(join(dir, MANIFEST))) throw new Error(`The model ${nameOrPath} is not in ${modelsDir(env)}; run: memory-agents models pull ${HUB_ID.test(nameOrPath) ? nameOrPath : 'owner/name'}`);
  return dir;
}
