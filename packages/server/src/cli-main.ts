import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { isServiceError, silentLogger } from '@memory-agents/core';
import { isUnavailableError } from '@memory-agents/core/adapter';
import { ADMIN_COMMANDS, type AdminCommand } from './admin-commands.js';
import { CLI_OPTIONS, GLOBAL_OPTIONS, STATE_OPTIONS, UsageError, inspectorFlag, lifecycleSettings, maintenanceSettings, metricsOption, redactionSettings, stateLocation, webhookSettings, type CliValues, type OptionName, type ServeExtras } from './cli-options.js';
import { baselineWasmOnly, CliError, print, runningServerPid, type CliIo } from './cli-support.js';
import { exportCommand, importCommand, migrateCommand } from './cli-data-commands.js';
import { modelsListCommand, modelsPullCommand } from './cli-models-commands.js';
import { reembedRun } from './cli-reembed-commands.js';
import { MAINTAIN_COMMANDS } from './cli-maintain-commands.js';
import { sendControlCommand } from './control-socket.js';
import { MODEL_CLI_OPTIONS, MODEL_USAGE, modelSettings, ModelSettingsError, type ModelSettings } from './model-options.js';
import { dataPaths, DEFAULT_DATA_DIR, type StateLocation } from './paths.js';
// The server, the adapters and the service are imported when a command needs them, so
// `--version`, `help` and usage errors answer without loading the database and index adapters.

export type { CliIo } from './cli-support.js';

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  stdoutAsync: (text) => new Promise<void>((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  }),
};

/**
 * One command of the CLI, whole: the usage `help COMMAND` prints (first line in the overview), the
 * flags it takes (any other is a usage error; `--json`, `--help`, `--version` go with every
 * command), the arguments it takes after its name (none unless listed), and what it does. `run`
 * returns the exit code.
 */
export type CliCommand = {
  usage: string;
  options: readonly OptionName[];
  /** The names of the arguments it takes after its name, in order (`NAME`); it checks which are required. */
  arguments?: readonly string[];
  run(values: CliValues, io: CliIo, args: readonly string[]): Promise<number>;
};

/** An admin command's CLI entry: its flags are checked here, then it runs through `runAdmin`. */
function adminCliCommand(command: AdminCommand): CliCommand {
  const spec = ADMIN_COMMANDS[command];
  const name = command.replace('.', ' ');
  return {
    usage: spec.usage,
    options: spec.options,
    async run(values, io) {
      const location = stateLocation(values, name);
      spec.parse(values, name);
      const flags: CliValues = Object.fromEntries(Object.entries(values).filter(([flag]) => !GLOBAL_OPTIONS.includes(flag as OptionName)));
      print(await runAdmin(location, command, flags), values.json === true, io);
      return 0;
    },
  };
}

/** Every command, by the words that name it. */
export const COMMANDS: Readonly<Record<string, CliCommand>> = {
  serve: {
    usage: `memory-agents serve [--port 8787] [--host 127.0.0.1] [--data DIR | --database-url URL] [--inspector | --no-inspector] [--webhooks] [model options]
    [--metrics (--metrics-listen HOST:PORT | --metrics-token TOKEN)]
  Serves the /v1 API. On an empty data dir (or database) it creates an organization and prints its
  first API key once. The inspector (a page to see and erase what agents know) is served at /inspect
  when the host is loopback, unless --no-inspector; --inspector serves it on any host. Exits 1 with one line when the port is in use or a server already runs on DIR.
  SIGTERM or SIGINT shuts it down gracefully (repeated SIGTERMs do not cut that short); a second
  SIGINT (Ctrl-C) stops it at once.
  --metrics serves Prometheus metrics at /metrics (off by default), on an address of their own
  (--metrics-listen 127.0.0.1:9464) and/or behind a bearer token (--metrics-token, or the
  environment variable MEMORY_AGENTS_METRICS_TOKEN, which stays out of the process list): one of
  the two is required.
  --webhooks switches webhooks on (/v1/webhooks; docs/deploying.md "Webhooks"). Receivers on
  loopback, private, link-local or unique-local addresses are refused unless
  --webhooks-allow-private (any address) or --webhooks-allow-hosts LIST (comma-separated host
  names, IPs or CIDR ranges, like 10.0.0.0/8,hooks.internal) allow them; either implies --webhooks.
  --redact-pattern NAME=REGEX (repeatable) adds a kind of personal data an agent's
  extraction_policy.redact may name beside card_number, email, iban and phone.
  --restore-window-days N: how long a forgotten memory can be restored before it is erased
  (default 7; a number of days above 0, at most 3650). --expired-retention-days N: erase a memory
  N days after it expired (default: expired memories are kept for audit until erased).
  --maintenance-idle-minutes N runs maintenance on agents idle N minutes (off by default); limits:
  --maintenance-kinds LIST, --maintenance-max-runs-per-day N (3), --maintenance-max-memories N (100).`,
    options: ['port', 'host', 'inspector', 'no-inspector', 'metrics', 'metrics-listen', 'metrics-token', ...STATE_OPTIONS, 'webhooks', 'webhooks-allow-private', 'webhooks-allow-hosts', 'redact-pattern', 'restore-window-days', 'expired-retention-days', 'maintenance-idle-minutes', 'maintenance-kinds', 'maintenance-max-runs-per-day', 'maintenance-max-memories', ...(Object.keys(MODEL_CLI_OPTIONS) as (keyof typeof MODEL_CLI_OPTIONS)[])],
    run: (values, io) => serve(stateLocation(values, 'serve'), values.port, values.host, modelSettings(values, io.env), io, { metrics: metricsOption(values, io.env), inspector: inspectorFlag(values), webhooks: webhookSettings(values), redaction: redactionSettings(values), memoryLifecycle: lifecycleSettings(values), maintenance: maintenanceSettings(values) }),
  },
  mcp: {
    usage: `memory-agents mcp --url URL --agent AGENT_ID [--end-user NAME] [--thread THREAD_ID]
  Serves the memory tools (remember, recall, ask, upload, list_agents) over MCP on stdio, for
  desktop clients (Claude Desktop, Cursor), talking to the server running at --url. The API key
  comes from the environment variable MEMORY_AGENTS_API_KEY (never a flag). Without --thread, each
  MCP session writes to a thread of its own, created on first use and titled by the client's name.
  The same tools are served over Streamable HTTP at /mcp by \`serve\` (bearer = an API key).`,
    options: ['url', 'agent', 'end-user', 'thread'],
    run: (values, io) => mcp(values, io),
  },
  export: {
    usage: `memory-agents export --agent AGENT_ID [--org ORG_ID] [--no-vectors] [--data DIR | --database-url URL] > agent.jsonl
  Writes the agent (threads, messages, observation jobs and their turns, stored originals, memories
  with validity and provenance, ledger entries) as JSON lines on stdout (docs/export-format.md).
  --no-vectors leaves the memories' vectors out (smaller; an import embeds them again). On a data
  dir, stop the server first (the embedded database serves one process); with --database-url it
  runs beside servers.`,
    options: ['agent', 'org', 'no-vectors', ...STATE_OPTIONS],
    run: (values, io) => exportCommand(values, io),
  },
  import: {
    usage: `memory-agents import --org ORG_ID [--file agent.jsonl] [--data DIR | --database-url URL] [model options]
  Reads an export (from --file, or stdin) into the organization as a new agent with new ids, and
  prints the new agent id. The whole file is checked first (JSON, ids, vector lengths, the sha256
  of each stored original): a bad or truncated file is refused with its line number and nothing is
  written. The agent stays hidden until its last line is written: an import that is killed leaves
  no agent (the next start, or the next import into the organization, removes what it wrote).
  Progress goes to stderr every 1000 memories. Memories are embedded again when the file has no
  vectors or another embedder made them (pass the same model options as serve). On a data dir,
  stop the server first.`,
    options: ['org', 'file', ...STATE_OPTIONS, ...(Object.keys(MODEL_CLI_OPTIONS) as (keyof typeof MODEL_CLI_OPTIONS)[])],
    run: (values, io) => importCommand(values, io),
  },
  migrate: {
    usage: `memory-agents migrate --data DIR --to postgres://... [--blobs DIR]
  Moves a whole embedded data dir (organizations, keys, billing ledger, agents, threads, observation
  jobs, sources, memories) into PostgreSQL, keeping every id, and copies its blobs to --blobs
  (default ./.memory-agents/blobs under the current directory, where serve --database-url run from
  here reads them). Stop the server on DIR first. Resumable: run it again after an interruption.
  Verifies counts and a sample of searches on both sides; exits 1 on a mismatch.`,
    options: ['data', 'to', 'blobs'],
    run: (values, io) => migrateCommand(values, io),
  },
  'reembed run': {
    usage: `memory-agents reembed run [--data DIR | --database-url URL] [model options]
  Re-embeds the memory index for the embedder the model options name (the offline default
  without them) now, in the foreground, printing progress; a server does the same by itself when
  it starts with another embedder than the index's. Resumable: run it again after an
  interruption. On a data dir, stop the server first; with --database-url it runs beside servers
  (one process re-embeds at a time).`,
    options: [...STATE_OPTIONS, ...(Object.keys(MODEL_CLI_OPTIONS) as (keyof typeof MODEL_CLI_OPTIONS)[])],
    run: (values, io) => reembedRun(stateLocation(values, 'reembed run'), modelSettings(values, io.env), values.json === true, io),
  },
  ...MAINTAIN_COMMANDS,
  ...Object.fromEntries((Object.keys(ADMIN_COMMANDS) as AdminCommand[]).map((command) => [command.replace('.', ' '), adminCliCommand(command)])),
  'models pull': {
    usage: `memory-agents models pull NAME [--file onnx/model.onnx] [--revision main] [--endpoint URL] [--force]
  Downloads a sentence-transformers model exported to ONNX (NAME: its Hugging Face id, like
  sentence-transformers/all-MiniLM-L6-v2) into the model cache, for the local embedder: config.json,
  tokenizer.json, the ONNX file (--file, its path in the repository) and the sentence-transformers
  files the repository has. Prints the model's directory on stdout, progress on stderr. Each file is
  checked against the hub's checksum (sha256, or the git blob sha1) before it is kept; an
  interrupted pull (Ctrl-C, a cut connection) resumes where it stopped when run again; a pull of the
  commit already in the cache downloads nothing (--force downloads it again).
  --endpoint (or HF_ENDPOINT) names a mirror of the hub (default https://huggingface.co); HF_TOKEN
  (never a flag) is sent for gated and private models; MEMORY_AGENTS_MODELS_DIR sets the cache
  (default $XDG_CACHE_HOME/memory-agents/models, else ~/.cache/memory-agents/models).`,
    options: ['file', 'revision', 'endpoint', 'force'],
    arguments: ['NAME'],
    run: (values, io, args) => modelsPullCommand(values, io, args),
  },
  'models list': {
    usage: `memory-agents models list [--json]
  Lists the models in the model cache (MEMORY_AGENTS_MODELS_DIR, else $XDG_CACHE_HOME/memory-agents/models,
  else ~/.cache/memory-agents/models): name, ONNX file, size, commit and directory, and the pulls
  that have not finished (run models pull again to finish them).`,
    options: [],
    run: (values, io) => modelsListCommand(values, io),
  },
};

const COMMON = `Every command but mcp and models takes --data DIR (default ${DEFAULT_DATA_DIR}) or --database-url URL
[--database-timeout-ms MS] (connect and statement timeout, default 5000 and 15000; 0: none).
Admin commands work while a server runs on the same data dir: they go through its control socket.
With --json, results and errors are printed as JSON (errors on stderr: {"error", "code"}).`;

const USAGE = `memory-agents: memory agents over HTTP on an embedded default

Usage:
${Object.values(COMMANDS)
  .map((command) => `  ${command.usage.split('\n')[0]}`)
  .join('\n')}
  memory-agents help [COMMAND]    memory-agents --version

${COMMON}

${MODEL_USAGE}`;

/** The usage of `words` (a command, or a group such as `keys`), or null when it names none. */
export function commandUsage(words: string[]): string | null {
  const name = words.join(' ');
  const matching = Object.entries(COMMANDS).filter(([command]) => command === name || command.startsWith(`${name} `));
  if (name === '' || matching.length === 0) return null;
  const extra = name === 'serve' || name === 'import' || name === 'reembed run' ? `\n\n${MODEL_USAGE}` : '';
  if (name === 'mcp' || name.split(' ')[0] === 'models') return `${matching.map(([, command]) => `Usage: ${command.usage}`).join('\n')}\n`;
  return `${matching.map(([, command]) => `Usage: ${command.usage}`).join('\n')}\n\n${COMMON}${extra}\n`;
}

/** The version of this package, read from its package.json (next to src/ and dist/). */
async function packageVersion(): Promise<string> {
  const text = await readFile(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/**
 * Runs the CLI on `argv` (the arguments after the script) and returns the exit code: 0 done, 1 a
 * refusal or failure (one line, with its code), 2 a usage error (one line and where to read
 * more). Writes only through `io`; importing this module does nothing.
 */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  let json = argv.includes('--json');
  try {
    const parsed = parseCommandLine(argv);
    json = parsed.values.json === true;
    return await runCommandLine(parsed, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ModelSettingsError) {
      const command = error instanceof UsageError ? error.command : 'serve';
      fail(error.message, 'usage', json, io, `Run "memory-agents help${command ? ` ${command}` : ''}" for usage.`);
      return 2;
    }
    if (error instanceof CliError || (error instanceof Error && error.name === 'StartError')) {
      fail(error.message, (error as CliError).code, json, io);
      return 1;
    }
    if (isUnavailableError(error)) {
      // The database (or the data dir's storage) is away: a sentence, not "internal".
      const reason = error instanceof Error ? error.message : String(error);
      fail(`the database did not respond (${reason}); check that it runs and is reachable from here, then run the command again`, 'service_unavailable', json, io);
      return 1;
    }
    fail(error instanceof Error ? error.message : String(error), 'internal', json, io);
    return 1;
  }
}

function parseCommandLine(argv: string[]): { values: CliValues; positionals: string[] } {
  try {
    return parseArgs({ args: argv, options: CLI_OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const words = argv.filter((arg) => !arg.startsWith('-')).slice(0, 2);
    throw new UsageError((error as Error).message.split('\n')[0]!.split('. ')[0]!, commandUsage(words) ? words.join(' ') : commandUsage(words.slice(0, 1)) ? words[0] : '');
  }
}

async function runCommandLine({ values, positionals }: { values: CliValues; positionals: string[] }, io: CliIo): Promise<number> {
  if (values.version) {
    io.stdout(`${await packageVersion()}\n`);
    return 0;
  }
  if (positionals[0] === 'help') {
    const topic = positionals.slice(1);
    if (topic.length === 0) {
      io.stdout(USAGE);
      return 0;
    }
    const usage = commandUsage(topic);
    if (usage === null) throw new UsageError(`no command "${topic.join(' ')}"`);
    io.stdout(usage);
    return 0;
  }
  if (positionals.length === 0) {
    (values.help ? io.stdout : io.stderr)(USAGE);
    return values.help ? 0 : 2;
  }
  if (values.help) {
    const usage = commandUsage(positionals.slice(0, 2)) ?? commandUsage(positionals.slice(0, 1));
    if (usage === null) throw new UsageError(`unknown command: ${positionals.join(' ')}`);
    io.stdout(usage);
    return 0;
  }
  const [group, action] = positionals;
  const name = SINGLE_WORD_COMMANDS.includes(group!) ? group! : `${group} ${action ?? ''}`.trim();
  const command = COMMANDS[name];
  if (command === undefined) {
    const actions = Object.keys(COMMANDS).filter((c) => c.startsWith(`${group} `));
    throw new UsageError(actions.length > 0 ? `${group} needs one of: ${actions.map((c) => c.split(' ')[1]).join(', ')}` : `unknown command: ${positionals.join(' ')}`, actions.length > 0 ? group : '');
  }
  const args = positionals.slice(name.split(' ').length);
  const allowed = command.arguments ?? [];
  if (args.length > allowed.length) {
    const extra = args[allowed.length]!;
    throw new UsageError(allowed.length === 0 ? `${name} takes no argument "${extra}"; every value is passed with its flag` : `${name} takes ${allowed.join(' ')} and no further argument "${extra}"`, name);
  }
  const refused = (Object.keys(values) as OptionName[]).filter((flag) => values[flag] !== undefined && !GLOBAL_OPTIONS.includes(flag) && !command.options.includes(flag));
  if (refused.length > 0) {
    throw new UsageError(`${name} does not take ${refused.map((flag) => `--${flag}`).join(', ')}`, name);
  }
  return command.run(values, io, args);
}

async function serve(location: StateLocation, port: string | undefined, host: string | undefined, models: ModelSettings, io: CliIo, { metrics, inspector, webhooks, redaction, memoryLifecycle, maintenance }: ServeExtras = {}): Promise<number> {
  const portNumber = port === undefined ? 8787 : Number(port);
  if (!/^\d+$/.test(port ?? '8787') || !Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535) throw new UsageError(`--port must be 0..65535, not ${port}`, 'serve');
  if (location.databaseUrl === undefined) {
    const owner = await runningServerPid(location.dataDir);
    if (owner !== null) throw new CliError('data_dir_locked', `a server (pid ${owner}) already runs on ${dataPaths(location.dataDir).root}; stop it or pass another --data`);
    if (!existsSync(dataPaths(location.dataDir).pgdata)) {
      io.stdout(`Creating a new data dir in ${dataPaths(location.dataDir).root} (the first start takes a few seconds)...\n`);
    }
  } else {
    io.stdout('Connecting to PostgreSQL and applying migrations...\n');
  }
  if (location.databaseUrl === undefined) baselineWasmOnly();
  // The key is read from the environment here and goes only into the adapters' Authorization header.
  // Traces from the standard OTEL_* variables (loaded only when they ask for it), before the
  // server starts so its first spans are exported too.
  const { startTracingFromEnvironment } = await import('./otel-environment.js');
  const tracing = await startTracingFromEnvironment(io.env, io.stderr);
  const { startServer } = await import('./start-server.js');
  const { createServiceModels, describeModels } = await import('./model-options.js');
  const server = await startServer({
    ...location,
    port: portNumber,
    ...(host === undefined ? {} : { host }),
    models: await createServiceModels(models, io.env),
    ...(metrics ? { metrics } : {}),
    ...(inspector === undefined ? {} : { inspector }),
    ...(webhooks ? { webhooks } : {}),
    ...(redaction ? { redaction } : {}),
    ...(memoryLifecycle ? { memoryLifecycle } : {}),
    ...(maintenance ? { maintenance } : {}),
  });
  if (server.firstKey) {
    io.stdout(`Created organization ${server.firstKey.organizationId} and its first API key. It is shown once; store it now:\n`);
    io.stdout(`  ${server.firstKey.key}\n`);
  }
  io.stdout(`${describeModels(models, io.env)}\n`);
  if (server.inspector) io.stdout(`Inspector: ${server.url}/inspect (sign in with an API key)\n`);
  // Before the listening line, so whoever waits for that line has read this one too.
  const reembedding = await server.service.reembedding.status().catch(() => null);
  if (reembedding) {
    io.stdout(
      `Re-embedding the memory index in the background (${reembedding.done} of ${reembedding.total} memories, ${reembedding.from.id} -> ${reembedding.to.id}): ` +
        'learning waits and search uses full text until it finishes; "memory-agents reembed status" shows progress\n',
    );
  }
  io.stdout(`memory-agents listening on ${server.url}\n`);
  if (server.metricsUrl) io.stdout(`metrics at ${server.metricsUrl}\n`);
  if (tracing) io.stdout(`traces to ${tracing.exporter} (OTEL_* environment)\n`);
  await shutdownSignal(io);
  await server.close();
  // Sends what the batch still holds; a collector that does not answer is given up on (its timeout).
  await tracing?.shutdown().catch((error: unknown) => io.stderr(`memory-agents: the last traces were not sent: ${String(error)}\n`));
  return 0;
}

/**
 * Resolves on the first SIGTERM or SIGINT, which starts the graceful shutdown. The handlers stay
 * for the rest of the process: a repeated SIGTERM (supervisors, `kill` of a process group and its
 * leader) never cuts the shutdown short (on the embedded default that would stop PGlite in the
 * middle of closing); a second SIGINT, from a person at a terminal, stops the process at once,
 * after saying so.
 */
function shutdownSignal(io: CliIo): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (!stopping) {
        stopping = true;
        io.stdout(`memory-agents: ${signal}, shutting down\n`);
        resolve();
      } else if (signal === 'SIGINT') {
        io.stderr('memory-agents: second SIGINT, stopping at once without finishing the shutdown; work in progress is resumed on the next start\n');
        process.exit(130);
      } else {
        io.stdout(`memory-agents: ${signal} again, still shutting down (a second Ctrl-C stops at once)\n`);
      }
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/** `memory-agents mcp`: the MCP server over stdio, in front of a running server. */
async function mcp(values: CliValues, io: CliIo): Promise<number> {
  if (!values.agent) throw new UsageError('mcp needs --agent AGENT_ID (see GET /v1/agents, or the list_agents tool)', 'mcp');
  const url = values.url ?? 'http://127.0.0.1:8787';
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be the http(s) URL of a running server, like http://127.0.0.1:8787, not "${url}"`, 'mcp');
  const apiKey = io.env.MEMORY_AGENTS_API_KEY?.trim();
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

const SINGLE_WORD_COMMANDS = ['serve', 'mcp', 'export', 'import', 'migrate'];

/** Runs an admin command through a running server's control socket, or in process when none runs. */
async function runAdmin(location: StateLocation, command: AdminCommand, flags: CliValues): Promise<unknown> {
  if (location.databaseUrl === undefined) {
    const paths = dataPaths(location.dataDir);
    const pid = await runningServerPid(location.dataDir);
    if (pid !== null) {
      const reply = await sendControlCommand(paths.controlSocket, command, flags).catch((error: unknown) => {
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
    return await runAdminCommand(composed.service, command, flags);
  } catch (error) {
    if (isServiceError(error)) throw new CliError(error.code, error.message);
    throw error;
  } finally {
    await composed.close();
  }
}

/** Prints one error line (or a JSON object under --json) on stderr. */
function fail(message: string, code: string, json: boolean, io: CliIo, hint?: string): void {
  if (json) io.stderr(`${JSON.stringify({ error: message, code })}\n`);
  else io.stderr(`memory-agents: ${message}${code === 'usage' || code === 'internal' ? '' : ` (${code})`}\n${hint ? `${hint}\n` : ''}`);
}
