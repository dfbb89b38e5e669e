/**
 * The PostgreSQL server tests run against (`DATABASE_URL`). A clone without one skips those tests
 * with a one-line reason; under `CI=true` a missing server is a failure, not a skip (`.ci/run`
 * always sets it), as `hasShared` does for ../shared.
 *
 * @example
 * const databaseUrl = postgresUrl('PostgreSQL store conformance');
 * describe.skipIf(!databaseUrl)('real PostgreSQL', () => { ... });
 */
export function postgresUrl(what: string): string | undefined {
  const url = process.env.DATABASE_URL;
  if (url) return url;
  const reason = 'DATABASE_URL is unset (these tests need a PostgreSQL server)';
  if (process.env.CI === 'true') throw new Error(`${what}: ${reason}; CI must run them`);
  process.stdout.write(`skipped: ${what}: ${reason}\n`);
  return undefined;
}
