import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testModelDir } from '../../local-embedder/src/test-model.js';
import { createServiceModels, describeModels, modelSettings, ModelSettingsError } from './model-options.js';

describe('modelSettings', () => {
  it('is fully offline without options', () => {
    expect(modelSettings({}, {})).toEqual({ chat: null, local: null, embedding: null, memoryWriter: 'verbatim', timeoutMs: undefined, maxRetries: undefined, maxConcurrency: undefined });
  });

  it('defaults to the LLM writer when a chat model is configured, and reads MEMORY_AGENTS_<OPTION> when a flag is absent', () => {
    const settings = modelSettings(
      { model: 'gpt-4o-mini', 'model-max-retries': '1' },
      { MEMORY_AGENTS_MODEL_URL: 'https://api.openai.com/v1/', MEMORY_AGENTS_MODEL_MAX_RETRIES: '5', MEMORY_AGENTS_EMBEDDING_MODEL: 'text-embedding-3-small', MEMORY_AGENTS_EMBEDDING_DIMENSIONS: '512' },
    );
    expect(settings).toEqual({
      chat: { baseURL: 'https://api.openai.com/v1', model: 'gpt-4o-mini' },
      local: null,
      embedding: { baseURL: 'https://api.openai.com/v1', model: 'text-embedding-3-small', dimensions: 512, sendDimensions: true },
      memoryWriter: 'llm',
      timeoutMs: undefined,
      maxRetries: 1,
      maxConcurrency: undefined,
    });
  });

  it('keeps the verbatim writer on request and a separate embeddings server', () => {
    const settings = modelSettings(
      { 'model-url': 'http://127.0.0.1:8080/v1', model: 'local', 'memory-writer': 'verbatim', 'embedding-url': 'http://127.0.0.1:8081/v1', 'embedding-model': 'e', 'embedding-dimensions': '768', 'embedding-omit-dimensions': true },
      {},
    );
    expect(settings.memoryWriter).toBe('verbatim');
    expect(settings.embedding).toEqual({ baseURL: 'http://127.0.0.1:8081/v1', model: 'e', dimensions: 768, sendDimensions: false });
  });

  it.each([
    [{ model: 'm' }, '--model needs --model-url'],
    [{ 'model-url': 'http://127.0.0.1:1/v1' }, '--model-url needs --model'],
    [{ 'memory-writer': 'llm' }, '--memory-writer llm needs'],
    [{ 'memory-writer': 'smart' }, '--memory-writer must be llm or verbatim'],
    [{ 'embedding-model': 'e', 'embedding-dimensions': '8' }, '--embedding-model needs --embedding-url or --model-url'],
    [{ 'embedding-dimensions': '8' }, 'need --embedding-model'],
    [{ 'model-url': 'http://127.0.0.1:1/v1', model: 'm', 'model-timeout-ms': '0' }, '--model-timeout-ms must be an integer >= 1'],
  ])('refuses %j', (values, message) => {
    expect(() => modelSettings(values, {})).toThrow(ModelSettingsError);
    expect(() => modelSettings(values, {})).toThrow(message);
  });
});

describe('createServiceModels and describeModels', () => {
  it('builds an answer model, an LLM writer that keeps documents verbatim, and an embedder whose id names model and dimensions', async () => {
    const settings = modelSettings({ 'model-url': 'http://127.0.0.1:11434/v1', model: 'llama3.1:8b', 'embedding-model': 'nomic-embed-text', 'embedding-dimensions': '768' }, {});
    const models = await createServiceModels(settings, { MEMORY_AGENTS_MODEL_API_KEY: 'sk-secret' });
    expect(models.model?.id).toBe('openai-compatible:llama3.1:8b');
    expect(models.writer?.id).toMatch(/^llm-memory-writer:openai-compatible:llama3\.1:8b\+documents:verbatim-v\d+$/);
    expect(models.writer?.capabilities).toEqual({ reconciles: true });
    expect(models.embedder?.id).toBe('openai-compatible:nomic-embed-text:768');
    // The chat model also describes document figures (its own instance); the offline default never does.
    expect(models.documents?.describeFigures?.model.id).toBe('openai-compatible:llama3.1:8b');
    expect(models.documents?.describeFigures?.model).not.toBe(models.model);
  });

  it('builds nothing for the offline defaults', async () => {
    expect(await createServiceModels(modelSettings({}, {}), {})).toEqual({});
  });

  it('never prints the key or credentials in a URL', () => {
    const settings = modelSettings({ 'model-url': 'https://user:pa55word@llm.example.com/v1', model: 'm' }, {});
    const line = describeModels(settings, { MEMORY_AGENTS_MODEL_API_KEY: 'sk-secret' });
    expect(line).toBe('models: answers m at https://llm.example.com/v1, key from MEMORY_AGENTS_MODEL_API_KEY; embeddings hashed n-grams (offline); memory writer llm');
    expect(line).not.toContain('sk-secret');
    expect(line).not.toContain('pa55word');
  });
});

describe('--embedder (a local sentence model)', () => {
  const scratch: string[] = [];
  afterAll(async () => {
    await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
  });
  /** A models cache holding an empty directory with a pull manifest under `name` (enough to resolve, not to load). */
  const cacheWith = async (...names: string[]) => {
    const root = await mkdtemp(join(tmpdir(), 'models-'));
    scratch.push(root);
    for (const name of names) {
      await mkdir(join(root, name), { recursive: true });
      await writeFile(join(root, name, 'memory-agents-model.json'), '{}');
    }
    return { MEMORY_AGENTS_MODELS_DIR: root };
  };

  it('hashed (or nothing) is no local model; local takes the hub model first, then the PyPI int8 copy', async () => {
    expect(modelSettings({ embedder: 'hashed' }, {}).local).toBeNull();
    const both = await cacheWith('sentence-transformers--all-MiniLM-L6-v2', 'all-MiniLM-L6-v2-int8');
    expect(modelSettings({ embedder: 'local' }, both).local).toEqual({ model: join(both.MEMORY_AGENTS_MODELS_DIR, 'sentence-transformers--all-MiniLM-L6-v2') });
    const pypi = await cacheWith('all-MiniLM-L6-v2-int8');
    expect(modelSettings({}, { ...pypi, MEMORY_AGENTS_EMBEDDER: 'local' }).local).toEqual({ model: join(pypi.MEMORY_AGENTS_MODELS_DIR, 'all-MiniLM-L6-v2-int8') });
    expect(modelSettings({ embedder: 'BAAI/bge-small-en-v1.5' }, await cacheWith('BAAI--bge-small-en-v1.5')).local?.model).toMatch(/BAAI--bge-small-en-v1\.5$/);
    expect(modelSettings({ embedder: pypi.MEMORY_AGENTS_MODELS_DIR }, {}).local).toEqual({ model: pypi.MEMORY_AGENTS_MODELS_DIR });
  });

  it.each([
    [{ embedder: 'local' }, '--embedder local: no local model in the models cache; run: memory-agents models pull sentence-transformers/all-MiniLM-L6-v2'],
    [{ embedder: 'BAAI/bge-small-en-v1.5' }, 'run: memory-agents models pull BAAI/bge-small-en-v1.5'],
    [{ embedder: '/nonexistent/model' }, 'The model directory /nonexistent/model does not exist'],
  ])('refuses %j with what to do', async (values, message) => {
    const env = await cacheWith();
    expect(() => modelSettings(values, env)).toThrow(ModelSettingsError);
    expect(() => modelSettings(values, env)).toThrow(message);
  });

  it('refuses a local model and an HTTP embeddings model together', async () => {
    const env = await cacheWith('all-MiniLM-L6-v2-int8');
    expect(() => modelSettings({ embedder: 'local', 'model-url': 'http://127.0.0.1:1/v1', model: 'm', 'embedding-model': 'e', 'embedding-dimensions': '8' }, env)).toThrow('--embedder and --embedding-model are two embedders: give one');
  });

  const model = testModelDir('--embedder with the real model');
  it.skipIf(!model)('builds the local embedder, says so on the startup line, and closes its worker', async () => {
    const settings = modelSettings({ embedder: model! }, {});
    const models = await createServiceModels(settings, {});
    expect(models.embedder?.id).toBe('onnx:8199be6f699a395f:mean+norm:256');
    expect((await models.embedder!.embed({ texts: ['hello'] })).vectors[0]).toHaveLength(384);
    expect(describeModels(settings, {})).toBe(`models: answers extractive (offline); embeddings local model ${model} (in process, offline); memory writer verbatim`);
    await models.close!();
    await expect(models.embedder!.embed({ texts: ['hello'] })).rejects.toThrow(/closed/);
  });
});
