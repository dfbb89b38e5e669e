import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeHub } from '../../packages/local-embedder/src/__fixtures__/fake-hub.js';
import { runCli } from '../support/server.js';

// The built `memory-agents` command pulling a model from a local stand-in for the Hugging Face hub.
describe('memory-agents models pull (the built CLI)', () => {
  it('pulls a model into MEMORY_AGENTS_MODELS_DIR, lists it, and resumes a download cut half-way', async () => {
    const onnx = randomBytes(1_500_000);
    const hub = await startFakeHub({
      repos: {
        'acme/mini-embed': {
          commit: '0123456789abcdef0123456789abcdef01234567',
          files: { 'config.json': { content: Buffer.from('{}') }, 'tokenizer.json': { content: Buffer.from('{"v":1}'), lfs: true }, 'onnx/model.onnx': { content: onnx, lfs: true } },
        },
      },
    });
    const cache = await mkdtemp(join(tmpdir(), 'ma-models-e2e-'));
    const env = { MEMORY_AGENTS_MODELS_DIR: cache, HF_ENDPOINT: hub.url, HF_TOKEN: '' };
    try {
      hub.cutNext('onnx/model.onnx', 600_000);
      const cut = await runCli(['models', 'pull', 'acme/mini-embed'], env);
      expect(cut.code).toBe(1);
      expect(cut.stderr.trim().split('\n').at(-1)).toMatch(/stopped after \d+ of 1500000 bytes; run the pull again to resume it .*\(network_error\)$/);

      const pulled = await runCli(['models', 'pull', 'acme/mini-embed'], env);
      expect(pulled).toMatchObject({ code: 0, stdout: `${join(cache, 'acme--mini-embed')}\n` });
      expect(pulled.stderr).toMatch(/memory-agents: onnx\/model\.onnx: resuming at \d0% of 1\.5MB\n/);
      expect(hub.contentRequests('onnx/model.onnx').at(-1)!.range).toMatch(/^bytes=\d+-$/);
      expect((await readFile(join(cache, 'acme--mini-embed', 'onnx/model.onnx'))).equals(onnx)).toBe(true);

      const list = await runCli(['models', 'list', '--json'], env);
      expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'acme/mini-embed', status: 'complete', onnx: 'onnx/model.onnx', size: onnx.length + 2 + 7 })]);
    } finally {
      await hub.close();
      await rm(cache, { recursive: true, force: true });
    }
  });
});
