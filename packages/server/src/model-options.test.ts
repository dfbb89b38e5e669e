import { describe, expect, it } from 'vitest';
import { createServiceModels, describeModels, modelSettings, ModelSettingsError } from './model-options.js';

describe('modelSettings', () => {
  it('is fully offline without options', () => {
    expect(modelSettings({}, {})).toEqual({ chat: null, embedding: null, memoryWriter: 'verbatim', timeoutMs: undefined, maxRetries: undefined, maxConcurrency: undefined });
  });

  it('defaults to the LLM writer when a chat model is configured, and reads MEMORY_AGENTS_<OPTION> when a flag is absent', () => {
    const settings = modelSettings(
      { model: 'gpt-4o-mini', 'model-max-retries': '1' },
      { MEMORY_AGENTS_MODEL_URL: 'https://api.openai.com/v1/', MEMORY_AGENTS_MODEL_MAX_RETRIES: '5', MEMORY_AGENTS_EMBEDDING_MODEL: 'text-embedding-3-small', MEMORY_AGENTS_EMBEDDING_DIMENSIONS: '512' },
    );
    expect(settings).toEqual({
      chat: { baseURL: 'https://api.openai.com/v1', model: 'gpt-4o-mini' },
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
  it('builds an answer model, an LLM writer that keeps documents verbatim, and an embedder whose id names model and dimensions', () => {
    const settings = modelSettings({ 'model-url': 'http://127.0.0.1:11434/v1', model: 'llama3.1:8b', 'embedding-model': 'nomic-embed-text', 'embedding-dimensions': '768' }, {});
    const models = createServiceModels(settings, { MEMORY_AGENTS_MODEL_API_KEY: 'sk-secret' });
    expect(models.model?.id).toBe('openai-compatible:llama3.1:8b');
    expect(models.writer?.id).toMatch(/^llm-memory-writer:openai-compatible:llama3\.1:8b\+documents:verbatim-v\d+$/);
    expect(models.writer?.capabilities).toEqual({ reconciles: true });
    expect(models.embedder?.id).toBe('openai-compatible:nomic-embed-text:768');
    // The chat model also describes document figures (its own instance); the offline default never does.
    expect(models.documents?.describeFigures?.model.id).toBe('openai-compatible:llama3.1:8b');
    expect(models.documents?.describeFigures?.model).not.toBe(models.model);
  });

  it('builds nothing for the offline defaults', () => {
    expect(createServiceModels(modelSettings({}, {}), {})).toEqual({});
  });

  it('never prints the key or credentials in a URL', () => {
    const settings = modelSettings({ 'model-url': 'https://user:pa55word@llm.example.com/v1', model: 'm' }, {});
    const line = describeModels(settings, { MEMORY_AGENTS_MODEL_API_KEY: 'sk-secret' });
    expect(line).toBe('models: answers m at https://llm.example.com/v1, key from MEMORY_AGENTS_MODEL_API_KEY; embeddings hashed n-grams (offline); memory writer llm');
    expect(line).not.toContain('sk-secret');
    expect(line).not.toContain('pa55word');
  });
});
