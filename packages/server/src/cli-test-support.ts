import { main, type CliIo } from './cli-main.js';

/** Runs the CLI's `main` in process (tests), capturing what it writes and its exit code. */
export async function runMain(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    stdoutAsync: async (text) => void (stdout += text),
    env: {},
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}
