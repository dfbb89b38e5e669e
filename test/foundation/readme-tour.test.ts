import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPdf } from '../../packages/documents/src/__fixtures__/generated-files.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';

const run = promisify(execFile);
const README = fileURLToPath(new URL('../../README.md', import.meta.url));

/** The fenced blocks of `language` in the README section under `heading`, in order. */
async function blocks(heading: string, language: string): Promise<string[]> {
  const text = await readFile(README, 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  expect(start, `README section "${heading}"`).toBeGreaterThan(0);
  const end = text.indexOf('\n## ', start + 4);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);
}

// The README's tour runs as written: the same commands against a freshly started server, with
// only the key and the address it printed put in.
describe('the README tour', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess();
  });
  afterAll(async () => {
    await server.stop();
    await removeDataDir(server.dataDir);
  });

  it('with curl: every command succeeds and the answer cites the observation', async () => {
    const [, tour] = await blocks('A five-minute tour with curl', 'sh');
    expect(tour).toContain('export KEY=');
    const script = tour!
      .replace(/^export KEY=.*$/m, `export KEY=${server.key}`)
      .replace(/^API=http:\/\/127\.0\.0\.1:8787$/m, `API=${server.url}`);
    expect(script).toContain(server.url);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toContain('"organization_id"');
    expect(stdout).toContain('Berlin');
    expect(stdout).toContain('"citations"');
    expect(stdout).toContain('"/v1/agents/{agent_id}"');
  });

  it('with the typed client: the TypeScript tour runs, streaming and an upload included', async () => {
    const [tour] = await blocks('With the typed client', 'ts');
    const dir = await mkdtemp(join(tmpdir(), 'ma-readme-'));
    // The snippet imports the workspace packages: it runs from a file inside the repository.
    const file = fileURLToPath(new URL(`./.readme-tour-${process.pid}.ts`, import.meta.url));
    try {
      await writeFile(join(dir, 'handbook.pdf'), buildPdf([{ text: ['Handbook: the Berlin office opens at nine.'] }]));
      await writeFile(file, tour!.replace("baseUrl: 'http://127.0.0.1:8787'", `baseUrl: '${server.url}'`) + '\nprocess.stdout.write(`\\nanswer: ${answer.message}\\n`);\n');
      const tsx = fileURLToPath(import.meta.resolve('tsx'));
      const { stdout } = await run(process.execPath, ['--import', pathToFileURL(tsx).href, file], { cwd: dir, env: { ...process.env, KEY: server.key! }, timeout: 120_000 });
      expect(stdout).toMatch(/answer: .*Berlin/);
    } finally {
      await rm(file, { force: true });
      await rm(dir, { recursive: true, force: true });
    }
  });
});
