import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI, exactly what `npx memory-agents` runs. */
export const CLI = fileURLToPath(new URL('../../packages/server/dist/cli.js', import.meta.url));

export type ServerProcess = {
  url: string;
  /** The first key printed on an empty data dir (null when the data dir was not empty). */
  key: string | null;
  dataDir: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for exit; resolves the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
};

/** Starts `memory-agents serve` on a loopback port chosen by the OS, in a fresh data dir unless given. */
export async function startServerProcess(
  options: {
    dataDir?: string;
    args?: string[];
    env?: NodeJS.ProcessEnv;
    nodeArgs?: string[];
    /** Working directory of the server (with `--database-url`, its `./.memory-agents/blobs` holds uploads). */
    cwd?: string;
  } = {},
): Promise<ServerProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'ma-e2e-')));
  const args = options.args ?? ['--data', dataDir];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, 'serve', '--port', '0', ...args], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    };
    const timer = setInterval(check, 20);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    url,
    key: /^\s+(sp_\S+)$/m.exec(output)?.[1] ?? null,
    dataDir,
    child,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Removes a data dir made by `startServerProcess`. */
export async function removeDataDir(dataDir: string): Promise<void> {
  await rm(dataDir, { recursive: true, force: true });
}

/** Runs the CLI to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
