import { MODEL_CLI_OPTIONS } from './model-options.js';

/**
 * Every flag of the CLI, for `parseArgs`. Which command takes which is said by the command's
 * entry (`options`); `--json`, `--help` and `--version` are taken by every command.
 */
export const CLI_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  data: { type: 'string' },
  'database-url': { type: 'string' },
  'database-timeout-ms': { type: 'string' },
  metrics: { type: 'boolean' },
  'metrics-listen': { type: 'string' },
  'metrics-token': { type: 'string' },
  name: { type: 'string' },
  org: { type: 'string' },
  'key-id': { type: 'string' },
  credits: { type: 'string' },
  amount: { type: 'string' },
  limits: { type: 'string' },
  url: { type: 'string' },
  agent: { type: 'string' },
  'end-user': { type: 'string' },
  thread: { type: 'string' },
  inspector: { type: 'boolean' },
  'no-inspector': { type: 'boolean' },
  webhooks: { type: 'boolean' },
  'webhooks-allow-private': { type: 'boolean' },
  'webhooks-allow-hosts': { type: 'string' },
  file: { type: 'string' },
  to: { type: 'string' },
  blobs: { type: 'string' },
  'no-vectors': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  ...MODEL_CLI_OPTIONS,
} as const;

export type OptionName = keyof typeof CLI_OPTIONS;

/** The flags every command takes. */
export const GLOBAL_OPTIONS: readonly OptionName[] = ['json', 'help', 'version'];

/** Where a command finds the state: `--data DIR` or `--database-url URL`. */
export const STATE_OPTIONS = ['data', 'database-url', 'database-timeout-ms'] as const satisfies readonly OptionName[];

/** The parsed flags: a string per string flag, a boolean per boolean flag, absent when not given. */
export type CliValues = { [K in OptionName]?: (typeof CLI_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** A mistake in the command line: exit 2 with one line and where to read more (`help COMMAND`). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command = '',
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The value of a flag a command needs; a usage error naming `flags` when it is missing. */
export function required(value: string | undefined, command: string, flags: string): string {
  if (!value) throw new UsageError(`${command} needs ${flags}`, command);
  return value;
}

/** A decimal the credit ledger accepts (>= 0, like 100 or 2.5). */
export function decimal(value: string, flag: string, command: string): string {
  if (!/^\d+(\.\d+)?$/.test(value.trim())) throw new UsageError(`${flag} must be a decimal number >= 0, like 100 or 2.5, not "${value}"`, command);
  return value.trim();
}
