import { isIP } from 'node:net';
import type { MaintenanceScheduleOptions, MemoryLifecycleOptions, RedactionOptions, WebhookOptions } from '@memory-agents/core';
import { MODEL_CLI_OPTIONS } from './model-options.js';
import { DEFAULT_DATA_DIR, type StateLocation } from './paths.js';

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
  'redact-pattern': { type: 'string', multiple: true },
  'restore-window-days': { type: 'string' },
  'expired-retention-days': { type: 'string' },
  'maintenance-idle-minutes': { type: 'string' },
  'maintenance-kinds': { type: 'string' },
  'maintenance-max-runs-per-day': { type: 'string' },
  'maintenance-max-memories': { type: 'string' },
  file: { type: 'string' },
  to: { type: 'string' },
  blobs: { type: 'string' },
  'no-vectors': { type: 'boolean' },
  apply: { type: 'boolean' },
  'max-share': { type: 'string' },
  revision: { type: 'string' },
  endpoint: { type: 'string' },
  force: { type: 'boolean' },
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
export type CliValues = {
  [K in OptionName]?: (typeof CLI_OPTIONS)[K]['type'] extends 'boolean' ? boolean : (typeof CLI_OPTIONS)[K] extends { multiple: true } ? string[] : string;
};

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

/** The state a command works on, from `--data` / `--database-url`. */
export function stateLocation(values: CliValues, command: string): StateLocation {
  if (values.data !== undefined && values['database-url'] !== undefined) throw new UsageError('pass either --data or --database-url, not both', command);
  if (values['database-timeout-ms'] !== undefined && values['database-url'] === undefined) throw new UsageError('--database-timeout-ms needs --database-url', command);
  return values['database-url'] !== undefined
    ? { databaseUrl: values['database-url'], ...databaseTimeoutOption(values['database-timeout-ms'], command) }
    : { dataDir: values.data ?? DEFAULT_DATA_DIR };
}

/** `--database-timeout-ms MS`: one bound for connecting and for each statement (0: none). */
export function databaseTimeoutOption(value: string | undefined, command: string): { databaseTimeoutMs?: number } {
  if (value === undefined) return {};
  if (!/^\d{1,7}$/.test(value.trim())) throw new UsageError(`--database-timeout-ms must be a whole number of milliseconds (0..9999999), not "${value}"`, command);
  return { databaseTimeoutMs: Number(value.trim()) };
}

/** `--inspector` / `--no-inspector`, or undefined (the server's default: on for loopback). */
export function inspectorFlag(values: CliValues): boolean | undefined {
  if (values.inspector && values['no-inspector']) throw new UsageError('give --inspector or --no-inspector, not both', 'serve');
  return values.inspector ? true : values['no-inspector'] ? false : undefined;
}

/** `--metrics` with `--metrics-listen HOST:PORT` and/or `--metrics-token` (or MEMORY_AGENTS_METRICS_TOKEN). */
export function metricsOption(values: CliValues, env: Record<string, string | undefined>): { listen?: { host: string; port: number }; token?: string } | undefined {
  const token = values['metrics-token'] ?? (env.MEMORY_AGENTS_METRICS_TOKEN?.trim() || undefined);
  const listen = values['metrics-listen'];
  if (!values.metrics) {
    if (values['metrics-listen'] !== undefined || values['metrics-token'] !== undefined) throw new UsageError('--metrics-listen and --metrics-token go with --metrics', 'serve');
    return undefined;
  }
  if (listen === undefined && token === undefined) {
    throw new UsageError('--metrics needs its own address (--metrics-listen 127.0.0.1:9464) or a bearer token (--metrics-token, or MEMORY_AGENTS_METRICS_TOKEN)', 'serve');
  }
  if (token !== undefined && token.length < 16) throw new UsageError('the metrics token must be at least 16 characters', 'serve');
  let address: { host: string; port: number } | undefined;
  if (listen !== undefined) {
    const found = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(listen.trim());
    const port = found ? Number(found[2]) : NaN;
    if (!found || port > 65535) throw new UsageError(`--metrics-listen must be HOST:PORT, like 127.0.0.1:9464, not "${listen}"`, 'serve');
    address = { host: found[1]!.replace(/^\[|\]$/g, ''), port };
  }
  return { ...(address ? { listen: address } : {}), ...(token !== undefined ? { token } : {}) };
}

/** `--webhooks` and its allowances, as `createMemoryService`'s `webhooks` option (undefined: off). */
export function webhookSettings(values: CliValues): WebhookOptions | undefined {
  const hosts = (values['webhooks-allow-hosts'] ?? '').split(',').map((host) => host.trim()).filter((host) => host !== '');
  if (!values.webhooks && !values['webhooks-allow-private'] && hosts.length === 0) return undefined;
  for (const host of hosts) {
    const [address = '', bits, extra] = host.split('/');
    const version = isIP(address);
    const validCidr = extra === undefined && version !== 0 && /^\d{1,3}$/.test(bits ?? '') && Number(bits) <= (version === 4 ? 32 : 128);
    if (host.includes('/') && !validCidr) throw new UsageError(`--webhooks-allow-hosts: ${host} is not a host name, an IP or a CIDR range`, 'serve');
  }
  return { allowPrivate: values['webhooks-allow-private'] === true, allowedHosts: hosts };
}

/**
 * `--redact-pattern NAME=REGEX` (repeatable), as `createMemoryService`'s `redaction` option: kinds of
 * personal data of the operator's own an agent's `extraction_policy.redact` may name (issue 44).
 */
export function redactionSettings(values: CliValues): RedactionOptions | undefined {
  const given = values['redact-pattern'] ?? [];
  if (given.length === 0) return undefined;
  const patterns: Record<string, RegExp> = {};
  for (const entry of given) {
    const at = entry.indexOf('=');
    const name = at < 0 ? '' : entry.slice(0, at);
    if (!/^[a-z][a-z0-9_]{0,39}$/.test(name)) throw new UsageError(`--redact-pattern takes NAME=REGEX with a lower-case NAME such as national_id, not "${entry}"`, 'serve');
    if (Object.hasOwn(patterns, name)) throw new UsageError(`--redact-pattern names ${name} twice`, 'serve');
    try {
      patterns[name] = new RegExp(entry.slice(at + 1), 'gu');
    } catch (error) {
      throw new UsageError(`--redact-pattern ${name}: not a regular expression (${(error as Error).message})`, 'serve');
    }
  }
  return { patterns };
}

/**
 * `--restore-window-days N` and `--expired-retention-days N`, as `createMemoryService`'s
 * `memoryLifecycle` (issue 42).
 */
export function lifecycleSettings(values: CliValues): MemoryLifecycleOptions | undefined {
  const days = (option: 'restore-window-days' | 'expired-retention-days', zero: boolean, max: number): number | undefined => {
    const given = values[option];
    if (given === undefined) return undefined;
    const value = Number(given);
    if (!/^\d+(\.\d+)?$/.test(given) || (value === 0 && !zero) || value > max) {
      throw new UsageError(`--${option} takes a number of days ${zero ? 'from 0' : 'above 0'} and at most ${max}, not "${given}"`, 'serve');
    }
    return value;
  };
  const restoreWindowDays = days('restore-window-days', false, 3650);
  const expiredRetentionDays = days('expired-retention-days', true, 36500);
  if (restoreWindowDays === undefined && expiredRetentionDays === undefined) return undefined;
  return { ...(restoreWindowDays === undefined ? {} : { restoreWindowDays }), ...(expiredRetentionDays === undefined ? {} : { expiredRetentionDays }) };
}

/**
 * `--maintenance-idle-minutes N` (with `--maintenance-kinds`, `--maintenance-max-runs-per-day`,
 * `--maintenance-max-memories`), as `createMemoryService`'s `maintenance.schedule` (issue 43): off
 * unless `--maintenance-idle-minutes` is given. Kinds and ranges are checked by the service.
 */
export function maintenanceSettings(values: CliValues): { schedule: MaintenanceScheduleOptions } | undefined {
  const limits = ['maintenance-kinds', 'maintenance-max-runs-per-day', 'maintenance-max-memories'] as const;
  const idle = values['maintenance-idle-minutes'];
  if (idle === undefined) {
    const alone = limits.find((option) => values[option] !== undefined);
    if (alone) throw new UsageError(`--${alone} needs --maintenance-idle-minutes N (the schedule is off without it)`, 'serve');
    return undefined;
  }
  const number = (option: 'maintenance-idle-minutes' | 'maintenance-max-runs-per-day' | 'maintenance-max-memories', given: string | undefined): number | undefined => {
    if (given === undefined) return undefined;
    if (!/^\d+(\.\d+)?$/.test(given) || Number(given) <= 0) throw new UsageError(`--${option} takes a number above 0, not "${given}"`, 'serve');
    return Number(given);
  };
  const runs = number('maintenance-max-runs-per-day', values['maintenance-max-runs-per-day']);
  const memories = number('maintenance-max-memories', values['maintenance-max-memories']);
  const kinds = values['maintenance-kinds']?.split(',').map((kind) => kind.trim()).filter((kind) => kind !== '');
  return {
    schedule: {
      idleMinutes: number('maintenance-idle-minutes', idle)!,
      ...(kinds === undefined ? {} : { kinds: kinds as MaintenanceScheduleOptions['kinds'] }),
      ...(runs === undefined ? {} : { maxRunsPerDay: runs }),
      ...(memories === undefined ? {} : { maxMemoriesPerRun: memories }),
    },
  };
}

/** What `serve` was asked for beyond the state, the port and the models. */
export type ServeExtras = {
  metrics?: { listen?: { host: string; port: number }; token?: string } | undefined;
  inspector?: boolean | undefined;
  webhooks?: WebhookOptions | undefined;
  redaction?: RedactionOptions | undefined;
  memoryLifecycle?: MemoryLifecycleOptions | undefined;
  maintenance?: { schedule: MaintenanceScheduleOptions } | undefined;
};
