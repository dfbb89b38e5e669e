#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { isServiceError, isUnavailableError, silentLogger } from '@memory-agents/core';
import type { AdminCommand } from './admin-commands.js';
import { sendControlCommand } from './control-socket.js';
import { MODEL_CLI_OPTIONS, MODEL_USAGE, modelSettings, ModelSettingsError, type ModelSettings } from './model-options.js';
import { dataPaths, DEFAULT_DATA_DIR, type StateLocation } from './paths.js';
// The server, the adapters and the admin commands are imported when a command needs them, so
// `--version`, `help` and usage errors answer without loading the database and index adapters.

/** One command's usage: the line(s) `help COMMAND` and `COMMAND --help` print. */
const COMMANDS: Record<string, string> = {
  serve: `memory-agents serve [--port 8787] [--host 127.0.0.1] [--data DIR | --database-url URL] [model options]
  Serves the /v1 API. On an empty data dir (or database) it creates an organization and prints its
  first API key once. Exits 1 with one line when the port is in use or a server already runs on DIR.`,
  mcp: `memory-agents mcp --url URL --agent AGENT_ID [--end-user NAME] [--thread THREAD_ID]
  Serves the memory tools (remember, recall, ask, upload, list_agents) over MCP on stdio, for
  desktop clients (Claude Desktop, Cursor), talking to the server running at --url. The API key
  comes from the environment variable MEMORY_AGENTS_API_KEY (never a flag). Without --thread, each
  MCP session writes to a thread of its own, created on first use and titled by the client's name.
  The same tools are served over Streamable HTTP at /mcp by \`serve\` (bearer = an API key).`,
  'orgs create': `memory-agents orgs create --name NAME [--credits DECIMAL] [--json]
  --credits enables billing with that starting balance (--credits 0: billing on, no credit).`,
  'orgs list': `memory-agents orgs list [--json]`,
  'orgs limits': `memory-agents orgs limits --org ORG_ID --limits JSON [--json]
  Replaces the organization's limit overrides whole, e.g.
  --limits '{"rateLimits":{"chat":{"subject":{"limit":50,"windowSeconds":60}}}}'`,
  'keys create': `memory-agents keys create --org ORG_ID [--json]   (the key is shown once)`,
  'keys list': `memory-agents keys list --org ORG_ID [--json]`,
  'keys revoke': `memory-agents keys revoke --key-id KEY_ID [--json]   (effective on the very next request)`,
  'credits add': `memory-agents credits add --org ORG_ID --amount DECIMAL [--json]   (a grant, e.g. 25.5)`,
  'billing show': `memory-agents billing show --org ORG_ID [--json]`,
  'billing enable': `memory-agents billing enable --org ORG_ID [--json]`,
  'billing disable': `memory-agents billing disable --org ORG_ID [--json]`,
  'billing threshold': `memory-agents billing threshold --org ORG_ID --amount DECIMAL [--json]`,
};

const COMMON = `Every command but mcp takes --data DIR (default ${DEFAULT_DATA_DIR}) or --database-url URL
[--database-timeout-ms MS] (connect and statement timeout, default 5000 and 15000; 0: none).
Admin commands work while a server runs on the same data dir: they go through its control socket.
With --json, results and errors are printed as JSON (errors on stderr: {"error", "code"}).`;

const USAGE = `memory-agents: memory agents over HTTP on an embedded default

Usage:
${Object.values(COMMANDS)
  .map((text) => `  ${text.split('\n')[0]}`)
  .join('\n')}
  memory-agents help [COMMAND]    memory-agents --version

${COMMON}

${MODEL_USAGE}`;

/** The usage of `words` (a command, or a group such as `keys`), or null when it names none. */
function commandUsage(words: string[]): string | null {
  const name = words.join(' ');
  const matching = Object.entries(COMMANDS).filter(([command]) => command === name || command.startsWith(`${name} `));
  if (name === '' || matching.length === 0) return null;
  const extra = name === 'serve' ? `\n\n${MODEL_USAGE}` : '';
  if (name === 'mcp') return `${matching.map(([, text]) => `Usage: ${text}`).join('\n')}\n`;
  return `${matching.map(([, text]) => `Usage: ${text}`).join('\n')}\n\n${COMMON}${extra}\n`;
}

/** A mistake in the command line: exit 2 with one line and where to read more. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly command = '',
  ) {
    super(message);
  }
}

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  data: { type: 'string' },
  'database-url': { type: 'string' },
  'database-timeout-ms': { type: 'string' },
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
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', default: false },
  ...MODEL_CLI_OPTIONS,
} as const;

/** The version of this package, read from its package.json (next to src/ and dist/). */
async function packageVersion(): Promise<string> {
  const text = await readFile(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/**
 * Compiles WebAssembly with V8's baseline compiler (Liftoff) only, before PGlite's module is
 * compiled. PGlite's PostgreSQL is ~9 MB of wasm; V8 tiers its hot functions up to TurboFan in
 * the background, which on an embedded server kept 50–90 MB more resident memory and cost ~1.5 s
 * of CPU in the first seconds, for little gain on the server's small queries (docs/decisions.md,
 * "A lean server"). Process-wide: the document converter and OCR, which do heavy wasm work, run
 * in a child process that is started without it.
 */
function baselineWasmOnly(): void {
  setFlagsFromString('--liftoff-only');
}

/** A decimal the credit ledger accepts (>= 0, like 100 or 2.5). */
function decimal(value: string, flag: string, command: string): string {
  if (!/^\d+(\.\d+)?$/.test(value.trim())) throw new UsageError(`${flag} must be a decimal number >= 0, like 100 or 2.5, not "${value}"`, command);
  return value.trim();
}

/** `--database-timeout-ms MS`: one bound for connecting and for each statement (0: none). */
function databaseTimeoutOption(value: string | undefined, command: string): { databaseTimeoutMs?: number } {
  if (value === undefined) return {};
  if (!/^\d{1,7}$/.test(value.trim())) throw new UsageError(`--database-timeout-ms must be a whole number of milliseconds (0..9999999), not "${value}"`, command);
  return { databaseTimeoutMs: Number(value.trim()) };
}

let jsonErrors = process.argv.includes('--json');

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const words = argv.filter((arg) => !arg.startsWith('-')).slice(0, 2);
    throw new UsageError((error as Error).message.split('\n')[0]!.split('. ')[0]!, commandUsage(words) ? words.join(' ') : commandUsage(words.slice(0, 1)) ? words[0] : '');
  }
  const { values, positionals } = parsed;
  jsonErrors = values.json;
  if (values.version) {
    process.stdout.write(`${await packageVersion()}\n`);
    return 0;
  }
  if (positionals[0] === 'help') {
    const topic = positionals.slice(1);
    if (topic.length === 0) {
      process.stdout.write(USAGE);
      return 0;
    }
    const usage = commandUsage(topic);
    if (usage === null) throw new UsageError(`no command "${topic.join(' ')}"`);
    process.stdout.write(usage);
    return 0;
  }
  if (positionals.length === 0) {
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    process.stderr.write(USAGE);
    return 2;
  }
  if (values.help) {
    const usage = commandUsage(positionals.slice(0, 2)) ?? commandUsage(positionals.slice(0, 1));
    if (usage === null) throw new UsageError(`unknown command: ${positionals.join(' ')}`);
    process.stdout.write(usage);
    return 0;
  }
  const [group, action] = positionals;
  const name = group === 'serve' || group === 'mcp' ? group : `${group} ${action ?? ''}`.trim();
  if (COMMANDS[name] === undefined) {
    throw new UsageError(
      commandUsage([group!]) ? `${group} needs one of: ${Object.keys(COMMANDS).filter((c) => c.startsWith(`${group} `)).map((c) => c.split(' ')[1]).join(', ')}` : `unknown command: ${positionals.join(' ')}`,
      commandUsage([group!]) ? group : '',
    );
  }
  if (group === 'mcp') return mcp(values);
  if (values.data !== undefined && values['database-url'] !== undefined) throw new UsageError('pass either --data or --database-url, not both', name);
  const location: StateLocation =
    values['database-url'] !== undefined
      ? { databaseUrl: values['database-url'], ...databaseTimeoutOption(values['database-timeout-ms'], name) }
      : { dataDir: values.data ?? DEFAULT_DATA_DIR };
  if (values['database-timeout-ms'] !== undefined && values['database-url'] === undefined) throw new UsageError('--database-timeout-ms needs --database-url', name);

  if (group === 'serve') return serve(location, values.port, values.host, modelSettings(values, process.env));

  const command = `${group}.${action}` as AdminCommand;
  const args: Record<string, unknown> = {};
  const need = (ok: unknown, flags: string) => {
    if (!ok) throw new UsageError(`${name} needs ${flags}`, name);
  };
  switch (command) {
    case 'orgs.create':
      need(values.name, '--name NAME');
      args.name = values.name;
      if (values.credits !== undefined) args.credits = decimal(values.credits, '--credits', name);
      break;
    case 'orgs.list':
      break;
    case 'orgs.limits':
      need(values.org && values.limits !== undefined, '--org ORG_ID --limits JSON');
      args.org = values.org;
      try {
        args.limits = JSON.parse(values.limits!) as unknown;
      } catch {
        throw new UsageError('--limits must be JSON, e.g. {"rateLimits":{"chat":{"subject":{"limit":50,"windowSeconds":60}}}}', name);
      }
      break;
    case 'keys.create':
    case 'keys.list':
    case 'billing.show':
    case 'billing.enable':
    case 'billing.disable':
      need(values.org, '--org ORG_ID');
      args.org = values.org;
      break;
    case 'credits.add':
    case 'billing.threshold':
      need(values.org && values.amount !== undefined, '--org ORG_ID --amount DECIMAL');
      args.org = values.org;
      args.amount = decimal(values.amount!, '--amount', name);
      break;
    case 'keys.revoke':
      need(values['key-id'], '--key-id KEY_ID');
      args.keyId = values['key-id'];
      break;
  }
  const result = await runAdmin(location, command, args);
  print(result, values.json);
  return 0;
}

async function serve(location: StateLocation, port: string | undefined, host: string | undefined, models: ModelSettings): Promise<number> {
  const portNumber = port === undefined ? 8787 : Number(port);
  if (!/^\d+$/.test(port ?? '8787') || !Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535) throw new UsageError(`--port must be 0..65535, not ${port}`, 'serve');
  if (location.databaseUrl === undefined) {
    const owner = await runningServerPid(location.dataDir);
    if (owner !== null) throw new CliError('data_dir_locked', `a server (pid ${owner}) already runs on ${dataPaths(location.dataDir).root}; stop it or pass another --data`);
    if (!existsSync(dataPaths(location.dataDir).pgdata)) {
      process.stdout.write(`Creating a new data dir in ${dataPaths(location.dataDir).root} (the first start takes a few seconds)...\n`);
    }
  } else {
    process.stdout.write('Connecting to PostgreSQL and applying migrations...\n');
  }
  if (location.databaseUrl === undefined) baselineWasmOnly();
  // The key is read from the environment here and goes only into the adapters' Authorization header.
  const { startServer } = await import('./start-server.js');
  const { createServiceModels, describeModels } = await import('./model-options.js');
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

/** `memory-agents mcp`: the MCP server over stdio, in front of a running server. */
async function mcp(values: { url?: string | undefined; agent?: string | undefined; 'end-user'?: string | undefined; thread?: string | undefined }): Promise<number> {
  if (!values.agent) throw new UsageError('mcp needs --agent AGENT_ID (see GET /v1/agents, or the list_agents tool)', 'mcp');
  const url = values.url ?? 'http://127.0.0.1:8787';
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be the http(s) URL of a running server, like http://127.0.0.1:8787, not "${url}"`, 'mcp');
  const apiKey = process.env.MEMORY_AGENTS_API_KEY?.trim();
  if (!apiKey) {
    throw new CliError(
      'missing_api_key',
      'set MEMORY_AGENTS_API_KEY to an API key (sp_...) in the environment of this command (in Claude Desktop or Cursor: the "env" of the server entry); keys are never passed as flags',
    );
  }
  const { runMcpStdio } = await import('./mcp/stdio.js');
  await runMcpStdio({
    url,
    apiKey,
    agentId: values.agent,
    version: await packageVersion(),
    ...(values['end-user'] === undefined ? {} : { endUser: values['end-user'] }),
    ...(values.thread === undefined ? {} : { threadId: values.thread }),
  });
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
      if (!reply.ok) throw new CliError(reply.code, reply.error);
      return reply.result;
    }
  }
  if (location.databaseUrl === undefined) baselineWasmOnly();
  const { composeService } = await import('./compose.js');
  const { runAdminCommand } = await import('./admin-commands.js');
  // An admin command takes no learning job, conversion or agent deletion: it exits in a moment,
  // and a job it abandoned would be found interrupted and resumed by a server.
  const composed = await composeService(location, silentLogger, {}, { backgroundWork: false });
  await composed.service.start();
  try {
    return await runAdminCommand(composed.service, command, args);
  } catch (error) {
    if (isServiceError(error)) throw new CliError(error.code, error.message);
    throw error;
  } finally {
    await composed.close();
  }
}

/** A refusal with a stable code: a service error, or a server that cannot start. Exit 1. */
class CliError extends Error {
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

/** Prints one error line (or a JSON object under --json) on stderr. */
function fail(message: string, code: string, hint?: string): void {
  if (jsonErrors) process.stderr.write(`${JSON.stringify({ error: message, code })}\n`);
  else process.stderr.write(`memory-agents: ${message}${code === 'usage' || code === 'internal' ? '' : ` (${code})`}\n${hint ? `${hint}\n` : ''}`);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ModelSettingsError) {
      const command = error instanceof UsageError ? error.command : 'serve';
      fail(error.message, 'usage', `Run "memory-agents help${command ? ` ${command}` : ''}" for usage.`);
      process.exitCode = 2;
    } else if (isUnavailableError(error) || (isServiceError(error) && error.code === 'service_unavailable')) {
      // The database (or the data dir's storage) is away: a sentence, not "internal".
      const reason = error instanceof Error ? error.message : String(error);
      fail(
        isServiceError(error)
          ? error.message
          : `the database did not respond (${reason}); check that it runs and is reachable from here, then run the command again`,
        'service_unavailable',
      );
      process.exitCode = 1;
    } else if (error instanceof CliError || (error instanceof Error && error.name === 'StartError')) {
      fail(error.message, (error as CliError).code);
      process.exitCode = 1;
    } else {
      fail(error instanceof Error ? error.message : String(error), 'internal');
      process.exitCode = 1;
    }
  },
);
