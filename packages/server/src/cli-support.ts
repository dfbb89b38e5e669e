import { readFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { dataPaths, type StateLocation } from './paths.js';

/** Where the CLI writes and what it reads from its environment (the process's, or a test's). */
export type CliIo = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Writes a large output (an export), resolving when the output can take more; else `stdout`. */
  stdoutAsync?: (text: string) => Promise<void>;
  /** What `import` reads without `--file`; the process's stdin by default. */
  stdin?: NodeJS.ReadableStream;
};

/** A refusal with a stable code: a service error, or a server that cannot start. Exit 1. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Prints a result: one `key=value` line per row, or JSON under --json. */
export function print(result: unknown, json: boolean, io: CliIo): void {
  if (json) {
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const rows = Array.isArray(result) ? result : [result];
  if (rows.length === 0) io.stdout('(none)\n');
  for (const row of rows) {
    io.stdout(`${Object.entries(row as Record<string, unknown>).map(([k, v]) => `${k}=${v === null ? '' : String(v)}`).join('  ')}\n`);
  }
}

/**
 * Compiles WebAssembly with V8's baseline compiler (Liftoff) only, before PGlite's module is
 * compiled. PGlite's PostgreSQL is ~9 MB of wasm; V8 tiers its hot functions up to TurboFan in
 * the background, which on an embedded server kept 50–90 MB more resident memory and cost ~1.5 s
 * of CPU in the first seconds, for little gain on the server's small queries (docs/decisions.md,
 * "A lean server"). Process-wide: the document converter and OCR, which do heavy wasm work, run
 * in a child process that is started without it.
 */
export function baselineWasmOnly(): void {
  setFlagsFromString('--liftoff-only');
}

/** The pid of a live server on the data dir, or null. */
export async function runningServerPid(dataDir: string): Promise<number | null> {
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

/** Refuses a data dir a server runs on: export and import open it themselves. */
export async function requireStoppedServer(location: StateLocation, command: string): Promise<void> {
  if (location.databaseUrl !== undefined) return;
  const pid = await runningServerPid(location.dataDir);
  if (pid !== null) {
    throw new CliError('data_dir_locked', `a server (pid ${pid}) runs on ${dataPaths(location.dataDir).root}; ${command} opens the data dir itself, so stop the server first (or use --database-url with PostgreSQL, where it runs beside servers)`);
  }
  baselineWasmOnly();
}
