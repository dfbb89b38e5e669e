import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeHub, type FakeHub, type FakeHubFile } from '../../local-embedder/src/__fixtures__/fake-hub.js';
import { main, type CliIo } from './cli-main.js';

const NAME = 'acme/mini-embed';
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const ONNX = randomBytes(2_500_000);

const files = (): Record<string, FakeHubFile> => ({
  'config.json': { content: Buffer.from('{"model_type":"bert"}') },
  'tokenizer.json': { content: Buffer.from('{"version":"1.0"}'), lfs: true },
  'onnx/model.onnx': { content: ONNX, lfs: true },
  '1_Pooling/config.json': { content: Buffer.from('{"pooling_mode_mean_tokens":true}') },
});

let hub: FakeHub;
let cache: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  cache = await mkdtemp(join(tmpdir(), 'ma-models-cli-'));
  hub = await startFakeHub({ repos: { [NAME]: { commit: COMMIT, files: files() }, 'acme/gated': { commit: COMMIT, files: files(), gated: true } }, token: 'hf_secret' });
  env = { MEMORY_AGENTS_MODELS_DIR: cache, HF_ENDPOINT: hub.url };
});

afterEach(async () => {
  await hub.close();
  await rm(cache, { recursive: true, force: true });
});

/** Runs `main` in process with the test's environment, capturing what it writes. */
async function run(argv: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), env: { ...env, ...extraEnv } };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

describe('memory-agents models pull / list', () => {
  it('pulls a model: its directory on stdout, a line per file and at most every 10% on stderr', async () => {
    const pulled = await run(['models', 'pull', NAME]);
    expect(pulled).toMatchObject({ code: 0, stdout: `${join(cache, 'acme--mini-embed')}\n` });
    const lines = pulled.stderr.trim().split('\n');
    expect(lines.filter((line) => !line.includes('%'))).toEqual([
      'memory-agents: config.json 21B',
      'memory-agents: tokenizer.json 17B',
      'memory-agents: onnx/model.onnx 2.5MB',
      'memory-agents: 1_Pooling/config.json 33B',
      `memory-agents: pulled ${NAME} (commit 0123456789ab)`,
    ]);
    const percentages = lines.filter((line) => line.includes('%'));
    expect(percentages.length).toBeLessThanOrEqual(9);
    expect(percentages.length).toBeGreaterThan(0);
    for (const line of percentages) expect(line).toMatch(/^memory-agents: onnx\/model\.onnx [1-9]0% of 2\.5MB$/);
    expect((await readFile(join(cache, 'acme--mini-embed', 'onnx/model.onnx'))).equals(ONNX)).toBe(true);

    const again = await run(['models', 'pull', NAME]);
    expect(again).toEqual({ code: 0, stdout: pulled.stdout, stderr: `memory-agents: ${NAME} is up to date (commit 0123456789ab); nothing downloaded (--force downloads it again)\n` });

    const list = await run(['models', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(`name=${NAME}  status=complete  onnx=onnx/model.onnx  size=2.5MB  commit=${COMMIT}  pulled_at=${JSON.parse(await readFile(join(cache, 'acme--mini-embed', 'memory-agents-model.json'), 'utf8')).pulledAt}  dir=${join(cache, 'acme--mini-embed')}\n`);
    const json = JSON.parse((await run(['models', 'list', '--json'])).stdout);
    expect(json).toEqual([expect.objectContaining({ name: NAME, status: 'complete', size: ONNX.length + 21 + 17 + 33 })]);
  });

  it('takes --file, --revision and --endpoint, and prints JSON under --json', async () => {
    hub.repos[NAME]!.files['onnx/model_qint8.onnx'] = { content: Buffer.from('small onnx'), lfs: true };
    const result = await run(['models', 'pull', NAME, '--file', 'onnx/model_qint8.onnx', '--revision', COMMIT, '--endpoint', hub.url, '--json'], { HF_ENDPOINT: 'http://127.0.0.1:9' });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ name: NAME, commit: COMMIT, up_to_date: false, files: expect.arrayContaining([expect.objectContaining({ path: 'onnx/model_qint8.onnx', size: 10 })]) });
    expect(hub.requests[0]!.path).toBe(`/${NAME}/resolve/${COMMIT}/config.json`);
  });

  it('resumes a cut download when run again, saying where it resumes', async () => {
    hub.cutNext('onnx/model.onnx', 1_000_000);
    const cut = await run(['models', 'pull', NAME]);
    expect(cut.code).toBe(1);
    expect(cut.stdout).toBe('');
    // Bytes in flight when the connection was cut are lost: the partial file holds what arrived.
    const kept = (await stat(join(cache, 'acme--mini-embed', 'onnx/model.onnx.incomplete'))).size;
    expect(cut.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^memory-agents: the download of onnx/model\\.onnx from http://127\\.0\\.0\\.1:\\d+ stopped after ${kept} of 2500000 bytes; run the pull again to resume it from there \\(or set HF_ENDPOINT to a mirror\\) \\(network_error\\)$`));
    const resumed = await run(['models', 'pull', NAME]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`memory-agents: onnx/model.onnx: resuming at ${Math.floor((kept * 10) / ONNX.length) * 10}% of 2.5MB\n`);
    expect(hub.contentRequests('onnx/model.onnx').at(-1)).toMatchObject({ range: `bytes=${kept}-`, bytes: ONNX.length - kept });
    expect((await readFile(join(cache, 'acme--mini-embed', 'onnx/model.onnx'))).equals(ONNX)).toBe(true);
  });

  it('fails with one line (exit 1) on a refusal, a missing file or an unreachable hub', async () => {
    const gated = await run(['models', 'pull', 'acme/gated']);
    expect(gated.code).toBe(1);
    expect(gated.stderr).toMatch(/^memory-agents: acme\/gated on http:\/\/127\.0\.0\.1:\d+ refused access \(HTTP 401\): .*set HF_TOKEN to a Hugging Face access token .* \(unauthorized\)\n$/);
    expect((await run(['models', 'pull', 'acme/gated'], { HF_TOKEN: 'hf_secret' })).code).toBe(0);

    const missing = await run(['models', 'pull', NAME, '--file', 'onnx/nope.onnx']);
    expect(missing.code).toBe(1);
    // The files pulled before it were reported; the error is the last line, and the only one.
    expect(missing.stderr).toMatch(/\nmemory-agents: acme\/mini-embed on \S+ has no file onnx\/nope\.onnx at revision main \(HTTP 404\); [^\n]* \(not_found\)\n$/);
    expect(missing.stderr.split('\n').filter((line) => line.includes('(not_found)'))).toHaveLength(1);

    const closed = await startFakeHub({ repos: {} });
    await closed.close();
    const offline = await run(['models', 'pull', NAME], { HF_ENDPOINT: closed.url });
    expect(offline).toEqual({ code: 1, stdout: '', stderr: `memory-agents: could not reach ${closed.url} (ECONNREFUSED); check the network, or set HF_ENDPOINT to a mirror of the Hugging Face hub (network_error)\n` });
  });

  it('refuses a missing, malformed or extra NAME as a usage error (exit 2) before any request', async () => {
    const cases: [string[], string][] = [
      [['models', 'pull'], 'memory-agents: models pull needs NAME, a Hugging Face model id like sentence-transformers/all-MiniLM-L6-v2'],
      [['models', 'pull', '../etc'], 'memory-agents: "../etc" is not a Hugging Face model id: expected owner/name, like sentence-transformers/all-MiniLM-L6-v2'],
      [['models', 'pull', NAME, 'extra'], 'memory-agents: models pull takes NAME and no further argument "extra"'],
      [['models', 'list', 'extra'], 'memory-agents: models list takes no argument "extra"; every value is passed with its flag'],
      [['models', 'list', '--force'], 'memory-agents: models list does not take --force'],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr.split('\n'), argv.join(' ')).toEqual([message, `Run "memory-agents help ${argv.slice(0, 2).join(' ')}" for usage.`, '']);
    }
    expect(hub.requests).toEqual([]);
    const help = await run(['help', 'models']);
    expect(help.stdout).toContain('Usage: memory-agents models pull NAME');
    expect(help.stdout).toContain('HF_TOKEN');
    expect(help.stdout).not.toContain('--data DIR');
  });
});
