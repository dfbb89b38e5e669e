import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { testPrerequisite } from '@memory-agents/core/testing';

/**
 * The sentence model the tests and benchmarks run (all-MiniLM-L6-v2, int8 ONNX, fetched from PyPI by
 * `scripts/fetch-test-model.sh` into the models cache, never into the repository): its directory, or
 * null with a one-line reason when it is absent (a failure under `CI=true`, where `.ci/run` fetches it).
 * `MEMORY_AGENTS_TEST_MODEL` points elsewhere.
 */
export function testModelDir(what: string): string | null {
  const root = process.env.MEMORY_AGENTS_MODELS_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'memory-agents', 'models');
  const dir = process.env.MEMORY_AGENTS_TEST_MODEL ?? join(root, 'all-MiniLM-L6-v2-int8');
  return testPrerequisite(existsSync(join(dir, 'model.onnx')), what, `no sentence model at ${dir} (bash scripts/fetch-test-model.sh fetches it from PyPI)`) ? dir : null;
}
