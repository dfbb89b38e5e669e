/**
 * Whether a test's prerequisite (a database server, a fixture directory) is there. When it is not:
 * throws under `CI=true` (a missing prerequisite in CI is a failure, not a skip), else prints one
 * line saying what is skipped and why (once per `what` and `reason`) and returns false.
 *
 * @example
 * describe.skipIf(!testPrerequisite(existsSync(dir), 'PDF conversion', `${dir} is absent`))('PDF conversion', () => { ... });
 */
export function testPrerequisite(available: boolean, what: string, reason: string): boolean {
  if (available) return true;
  if (process.env.CI === 'true') throw new Error(`${what}: ${reason}; CI must run with it`);
  const key = `${what}|${reason}`;
  if (!reported.has(key)) {
    reported.add(key);
    process.stdout.write(`skipped: ${what}: ${reason}\n`);
  }
  return false;
}

const reported = new Set<string>();

/**
 * The PostgreSQL server tests run against (`DATABASE_URL`), or undefined, with a one-line reason,
 * when it is unset; under `CI=true` a missing server is a failure (see {@link testPrerequisite}).
 *
 * @example
 * const databaseUrl = postgresUrl('PostgreSQL store conformance');
 * describe.skipIf(!databaseUrl)('real PostgreSQL', () => { ... });
 */
export function postgresUrl(what: string): string | undefined {
  const url = process.env.DATABASE_URL;
  return testPrerequisite(Boolean(url), what, 'DATABASE_URL is unset (these tests need a PostgreSQL server)') ? url : undefined;
}
