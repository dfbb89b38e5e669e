import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The workplace's shared data beside the repository (`../shared`: the spec, real documents, the
 * evaluation sets). A clone of the project does not have it: tests that read it are skipped there
 * with a one-line reason, and fail when `CI=true` (CI always has it beside the checkout).
 */
export const SHARED_DIR = fileURLToPath(new URL('../../../shared/', import.meta.url));

/** Absolute path of `../shared/<relative>`. */
export const sharedPath = (relative: string): string => `${SHARED_DIR}${relative}`;

const reported = new Set<string>();

/**
 * True when `../shared/<relative>` exists. When it does not: throws under `CI=true` (a missing
 * fixture in CI is a failure, not a skip), else prints one line saying what is skipped and why.
 *
 * @example
 * describe.skipIf(!hasShared('fixtures/docs', 'PDF conversion'))('PDF conversion', () => { ... });
 */
export function hasShared(relative: string, what: string): boolean {
  if (existsSync(sharedPath(relative))) return true;
  const reason = `../shared/${relative} is absent (a clone of the project has no ../shared beside it)`;
  if (process.env.CI === 'true') throw new Error(`${what}: ${reason}; CI must run with it`);
  if (!reported.has(`${relative}|${what}`)) {
    reported.add(`${relative}|${what}`);
    process.stdout.write(`skipped: ${what}: ${reason}\n`);
  }
  return false;
}
