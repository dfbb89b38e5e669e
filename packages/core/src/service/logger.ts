/** Structured log sink. Fields never carry secrets or message text. */
export type Logger = {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
};

/** Writes warnings and errors as JSON lines to stderr; drops debug and info. */
export const stderrLogger: Logger = {
  debug() {},
  info() {},
  warn: (message, fields) => process.stderr.write(`${JSON.stringify({ level: 'warn', message, ...fields })}\n`),
  error: (message, fields) => process.stderr.write(`${JSON.stringify({ level: 'error', message, ...fields })}\n`),
};

/** Drops everything (tests, embedding hosts with their own logging). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * An error for a log line: its message and those of its causes (a `ServiceError` wrapping a
 * driver failure says which operation failed; the cause says why, and an operator needs both).
 */
export function describeError(error: unknown): string {
  const parts = [String(error)];
  let current: unknown = error instanceof Error ? error.cause : undefined;
  for (; parts.length < 4 && current !== undefined && current !== null; current = current instanceof Error ? current.cause : undefined) {
    parts.push(String(current));
  }
  const text = parts.join('; caused by: ');
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}
