// The built `memory-agents serve` as the learning and bulk-import benchmarks drive it: a child
// process on a fresh data dir, its URL and first key read from its output, and the synthetic
// conversational turns they send.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This checkout's built CLI (`npm run build`). */
export const BUILT_CLI = fileURLToPath(new URL('../../packages/server/dist/cli.js', import.meta.url));

const WORDS = 'the a meeting project budget sister moved Lisbon March dinner friday doctor appointment garden tomatoes birthday party guitar lesson train ticket Oslo conference slides deadline'.split(' ');

/** A `chars`-character conversational turn: `prefix`, then words drawn from `seed` (same seed, same text). */
export function conversationalTurn(prefix: string, seed: number, chars: number): string {
  let text = prefix;
  let state = seed;
  while (text.length < chars) {
    state = (state * 1103515245 + 12345) % 2147483648;
    text += `${WORDS[state % WORDS.length]}${state % 9 === 0 ? '. ' : ' '}`;
  }
  return text.slice(0, chars);
}

export type BuiltServer = { url: string; key: string; child: ReturnType<typeof spawn>; dataDir: string; cli: string };

/** Starts `cli serve` on a new data dir (`<tmp>/<dataDirPrefix>*`) and resolves once it listens. */
export async function startBuiltServer(cli: string, options: { dataDirPrefix: string; nodeArgs?: string[]; serveArgs?: string[] }): Promise<BuiltServer> {
  const dataDir = await mkdtemp(join(tmpdir(), options.dataDirPrefix));
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), cli, 'serve', '--port', '0', '--data', dataDir, ...(options.serveArgs ?? [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  while (!/listening on (http:\/\/\S+)/.test(output)) {
    if (child.exitCode !== null) throw new Error(output);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { url: /listening on (http:\/\/\S+)/.exec(output)![1]!, key: /^\s+(sp_\S+)$/m.exec(output)![1]!, child, dataDir, cli };
}

/** Stops the server (SIGTERM, waits for its exit) and removes its data dir. */
export async function stopBuiltServer(server: BuiltServer): Promise<void> {
  server.child.kill('SIGTERM');
  if (server.child.exitCode === null) await new Promise((resolve) => server.child.once('exit', resolve));
  await rm(server.dataDir, { recursive: true, force: true });
}
