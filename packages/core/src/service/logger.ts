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
