import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { testPrerequisite } from '../testing/prerequisites.js';

// The workplace's shared data beside the repository (`../shared`: the spec, real documents, the
// evaluation sets). A clone of the project does not have it: tests that read it are skipped there
// with a one-line reason, and fail when `CI=true` (CI always has it beside the checkout).
const SHARED_DIR = fileURLToPath(new URL('../../../../../shared/', import.meta.url));

/** Absolute path of `../shared/<relative>`. */
export const sharedPath = (relative: string): string => `${SHARED_DIR}${relative}`;

/** True when `../shared/<relative>` exists; else skipped with a reason (a failure under `CI=true`). */
export const hasShared = (relative: string, what: string): boolean =>
  testPrerequisite(existsSync(sharedPath(relative)), what, `../shared/${relative} is absent (a clone of the project has no ../shared beside it)`);
