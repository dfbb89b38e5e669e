#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { isServiceError, silentLogger } from '@memory-agents/core';
import { runAdminCommand, type AdminCommand } from './admin-commands.js';
import { composeService, dataPaths, DEFAULT_DATA_DIR, type StateLocation } from './compose.js';
import { sendControlCommand } from './control-socket.js';
import { startServer } from './start-server.js';
import { createServiceModels, describeModels, MODEL_CLI_OPTIONS, MODEL_USAGE, modelSettings, ModelSettingsError, type ModelSettings } from './model-options.js';

const USAGE = `memory-agents: memory agents over HTTP on an embedded default

Usage:
  memory-agents serve [--port 8787] [--host 127.0.0.1] [--data DIR | --database-url URL]
  memory-agents orgs create --name NAME [--credits DECIMAL] [--json]
  memory-agents orgs limits --org ORG_ID --limits JSON [--json]   (replaces the overrides whole)
  memory-agents orgs list [--json]
  memory-agents keys create --org ORG_ID [--json]
  memory-agents keys revoke --key-id KEY_ID [--json]
  memory-agents keys list --org ORG_ID [--json]
  memory-agents credits add --org ORG_ID --amount DECIMAL [--json]
  memory-agents billing show|enable|disable --org ORG_ID [--json]
  memory-agents billing threshold --org ORG_ID --amount DECIMAL [--json]

--credits enables billing with that starting balance (--credits 0: billing on, no credit).

Every command takes --data DIR (default ${DEFAULT_DATA_DIR}) or --database-url URL.
Admin commands work while a server runs on the same data dir: they go through its control socket.

${MODEL_USAGE}`;

class UsageError extends Error {}

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  data: { type: 'string' },
  'database-url': { type: 'string' },
  name: { type: 'string' },
  org: { type: 'string' },
  'key-id': { type: 'string' },
  credits: { type: 'string' },
  amount: { type: 'string' },
  limits: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  ...MODEL_CLI_OPTIONS,
} as const;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help || positionals.length === 0) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (values.data !== undefined && values['database-url'] !== undefined) throw new UsageError('pass either --data or --database-url, not both');
  const location: StateLocation =
    values['database-url'] !== undefined ? { databaseUrl: values['database-url'] } : { dataDir: values.data ?? DEFAULT_DATA_DIR };

  const [group, action] = positionals;
  if (group === 'serve') return serve(location, values.port, values.host, modelSettings(values, process.env));

  const command = `${group}.${action}` as AdminCommand;
  const args: Record<string, unknown> = {};
  switch (command) {
    case 'orgs.create':
      if (!values.name) throw new UsageError('orgs create needs --name NAME');
      args.name = values.name;
      if (values.credits !== undefined) args.credits = values.credits;
      break;
    case 'orgs.list':
      break;
    case 'orgs.limits':
      if (!values.org || values.limits === undefined) throw new UsageError('orgs limits needs --org ORG_ID --limits JSON');
      args.org = values.org;
      try {
        args.limits = JSON.parse(values.limits) as unknown;
      } catch {
        throw new UsageError('--limits must be JSON, e.g. {"rateLimits":{"chat":{"subject":{"limit":50,"windowSeconds":60}}}}');
      }
      break;
    case 'keys.create':
    case 'keys.list':
      if (!values.org) throw new UsageError(`${group} ${action} needs --org ORG_ID`);
      args.org = values.org;
      break;
    case 'credits.add':
    case 'billing.threshold':
      if (!values.org || values.amount === undefined) throw new UsageError(`${group} ${action} needs --org ORG_ID --amount DECIMAL`);
      args.org = values.org;
      args.amount = values.amount;
      break;
    case 'billing.show':
    case 'billing.enable':
    case 'billing.disable':
      if (!values.org) throw new UsageError(`${group} ${action} needs --org ORG_ID`);
      args.org = values.org;
      break;
    case 'keys.revoke':
      if (!values['key-id']) throw new UsageError('keys revoke needs --key-id KEY_ID');
      args.keyId = values['key-id'];
      break;
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ')}`);
  }
  const result = await runAdmin(location, command, args);
  print(result, values.json);
  return 0;
}

async function serve(location: StateLocation, port: string | undefined, host: string | undefined, models: ModelSettings): Promise<number> {
  const portNumber = port === undefined ? 8787 : Number(port);
  if (!Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535) throw new UsageError(`--port must be 0..65535, not ${port}`);
  if (location.databaseUrl === undefined) {
    const owner = await runningServerPid(location.dataDir);
    if (owner !== null) throw new UsageError(`a server (pid ${owner}) already runs on ${dataPaths(location.dataDir).root}`);
  }
  // The key is read from the environment here and goes only into the adapters' Authorization header.
  const server = await startServer({ ...location, port: portNumber, ...(host === undefined ? {} : { host }), models: createServiceModels(models, process.env) });
  if (server.firstKey) {
    process.stdout.write(`Created organization ${server.firstKey.organizationId} and its first API key. It is shown once; store it now:\n`);
    process.stdout.write(`  ${server.firstKey.key}\n`);
  }
  process.stdout.write(`${describeModels(models, process.env)}\n`);
  process.stdout.write(`memory-agents listening on ${server.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stdout.write(`memory-agents: ${signal}, shutting down\n`);
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await server.close();
  return 0;
}

/** The pid of a live server on the data dir, or null. */
async function runningServerPid(dataDir: string): Promise<number | null> {
  const text = await readFile(dataPaths(dataDir).pidFile, 'utf8').catch(() => null);
  const pid = text === null ? NaN : Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

/** Runs an admin command through a running server's control socket, or in process when none runs. */
async function runAdmin(location: StateLocation, command: AdminCommand, args: Record<string, unknown>): Promise<unknown> {
  if (location.databaseUrl === undefined) {
    const paths = dataPaths(location.dataDir);
    const pid = await runningServerPid(location.dataDir);
    if (pid !== null) {
      const reply = await sendControlCommand(paths.controlSocket, command, args).catch((error: unknown) => {
        throw new Error(`a server (pid ${pid}) runs on ${paths.root} but its control socket did not answer (${String(error)}); retry in a moment`);
      });
      if (!reply.ok) throw new AdminError(reply.code, reply.error);
      return reply.result;
    }
  }
  const composed = await composeService(location, silentLogger);
  await composed.service.start();
  try {
    return await runAdminCommand(composed.service, command, args);
  } catch (error) {
    if (isServiceError(error)) throw new AdminError(error.code, error.message);
    throw error;
  } finally {
    await composed.close();
  }
}

class AdminError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function print(result: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const rows = Array.isArray(result) ? result : [result];
  if (rows.length === 0) process.stdout.write('(none)\n');
  for (const row of rows) {
    process.stdout.write(`${Object.entries(row as Record<string, unknown>).map(([k, v]) => `${k}=${v === null ? '' : String(v)}`).join('  ')}\n`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ModelSettingsError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`memory-agents: ${(error as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (error instanceof AdminError) {
      process.stderr.write(`memory-agents: ${error.message} (${error.code})\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`memory-agents: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
