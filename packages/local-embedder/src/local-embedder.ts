import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import type { Embedder } from '@memory-agents/core';
import type { EmbedRequest, EmbedResult } from '@memory-agents/core/adapter';
import { planInt8Graph } from './int8-graph.js';
import { readModelFiles, type ModelFiles } from './model-files.js';
import type { WorkerReply, WorkerSetup } from './model-worker.js';

/** Options of {@link localEmbedder}. */
export type LocalEmbedderOptions = {
  /**
   * The model directory (a sentence-transformers model exported to ONNX: `model.onnx` or
   * `onnx/model.onnx`, `tokenizer.json`, and the configs beside them), e.g. what
   * `memory-agents models pull` left in the cache.
   */
  model: string;
  /**
   * CPU threads the model runs on.
   * @default the machine's cores, at most 4
   */
  threads?: number;
  /**
   * Texts per message to the worker (each text runs through the model alone); a search's query
   * waits for at most one batch of learning.
   * @default 8
   */
  batchSize?: number;
  /**
   * Vectors of recent texts kept, by text: learning looks a statement up (its vector) before it
   * stores it (the same vector again), and short turns ("Thanks!") repeat. 0 keeps none.
   * @default 4096 (about 6 MB at 384 dimensions)
   */
  cacheSize?: number;
  /**
   * A graph that keeps its MatMul weights as int8 and turns them back into float32 inside the graph
   * (weight-only quantization, like the int8 all-MiniLM-L6-v2 the tests use) can multiply in int8:
   * measured about twice as fast again, vectors within cosine 0.98 of the float32 ones (LoCoMo
   * R@5 0.721 against 0.716, R@10 0.829 against 0.833), and the id ends in `:int8`. By default
   * such a graph's weights are dequantized once at load and it multiplies in float32: the vectors
   * the graph defines. Graphs of other kinds are unaffected.
   * @default false
   */
  int8?: boolean;
};

/** The Embedder port, plus the worker's lifetime. */
export type LocalEmbedder = Embedder & {
  /** The model directory's facts (pooling, normalisation, maximum length, checksum). */
  readonly files: ModelFiles;
  /** Stops the worker; embedding afterwards rejects. Idempotent. */
  close(): Promise<void>;
};

/** Requests of at most this many texts (a search's query, a chat turn) go before queued learning batches. */
const SMALL_REQUEST = 4;

type Chunk = { texts: string[]; resolve: (reply: { vectors: Float32Array; tokens: number }) => void; reject: (error: Error) => void };

/**
 * Starts the worker: the built file beside this one, or (tests run the sources) the source through
 * tsx's loader, registered inside the worker (a worker's `execArgv` does not carry `--import` hooks).
 */
function startThread(workerData: WorkerSetup): Worker {
  const built = new URL('./model-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return new Worker(built, { workerData });
  const source = new URL('./model-worker.ts', import.meta.url).href;
  const tsxRoot = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  const tsx = pathToFileURL(join(tsxRoot, 'dist', 'esm', 'api', 'index.mjs')).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`, { eval: true, workerData });
}

/**
 * An {@link Embedder} that runs a sentence-transformers model exported to ONNX in this process: the
 * tokenizer (`@huggingface/tokenizers`) and the graph (`onnxruntime-node`, CPU) run in a worker
 * thread, so embedding never blocks the event loop. Vectors are pooled and normalised as the model's
 * config says. Its `id` is `onnx:<sha256 of the graph, 16 hex>:<pooling>[+norm]:<max length>[:int8]`: the
 * same model file gives the same id wherever it lies, another file another id (the memory index
 * then re-embeds or refuses: `embedder_mismatch`).
 *
 * Memory is bounded: at most `batchSize` texts are in the worker at once, each cut at the model's
 * maximum sequence length.
 *
 * @example
 * const embedder = await localEmbedder({ model: '/models/all-MiniLM-L6-v2' });
 * const service = createMemoryService({ ..., embedder });
 */
export async function localEmbedder(options: LocalEmbedderOptions): Promise<LocalEmbedder> {
  const files = await readModelFiles(options.model);
  // Read only when asked for: the file is tens of MB, and the main thread has no other use for it.
  const int8 = options.int8 === true && planInt8Graph(await readFile(files.onnx)).matmuls > 0;
  const threads = options.threads ?? Math.max(1, Math.min(4, availableParallelism()));
  const batchSize = options.batchSize ?? 8;
  const cacheSize = options.cacheSize ?? 4096;
  if (!Number.isInteger(cacheSize) || cacheSize < 0) throw new RangeError(`cacheSize must be an integer >= 0, not ${cacheSize}`);
  const cache = cacheSize > 0 ? new LRUCache<string, Float32Array>({ max: cacheSize }) : null;
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a positive integer, not ${threads}`);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, not ${batchSize}`);

  const urgent: Chunk[] = [];
  const queued: Chunk[] = [];
  let worker: Worker | null = null;
  let ready: Promise<Worker> | null = null;
  let inFlight: Chunk | null = null;
  let closed = false;
  let nextId = 0;

  const fail = (error: Error) => {
    const pending = [...(inFlight ? [inFlight] : []), ...urgent.splice(0), ...queued.splice(0)];
    inFlight = null;
    worker = null;
    ready = null;
    for (const chunk of pending) chunk.reject(error);
  };

  // Started on first use and again after a crash (the next call starts a fresh worker).
  const startWorker = (): Promise<Worker> => {
    if (ready) return ready;
    ready = new Promise<Worker>((resolve, reject) => {
      const thread = startThread({ files, threads, int8 });
      let started = false;
      thread.on('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') {
          started = true;
          worker = thread;
          resolve(thread);
          pump();
        } else if (reply.type === 'failed') {
          void thread.terminate();
          ready = null;
          reject(new Error(`The local embedding model in ${files.dir} could not be loaded: ${reply.message}`));
        } else {
          const chunk = inFlight;
          inFlight = null;
          if (chunk) {
            if (reply.type === 'vectors') chunk.resolve(reply);
            else chunk.reject(new Error(`The local embedding model failed: ${reply.message}`));
          }
          pump();
        }
      });
      thread.on('error', (error) => {
        if (!started) {
          ready = null;
          reject(error);
        } else fail(new Error(`The local embedding model's worker stopped: ${error.message}`, { cause: error }));
      });
      thread.on('exit', (code) => {
        if (!closed && started) fail(new Error(`The local embedding model's worker exited (code ${code}).`));
      });
    });
    return ready;
  };

  // One chunk in the worker at a time; small requests first. Idle, the worker does not keep the process alive.
  const pump = () => {
    if (!worker || inFlight) return;
    const chunk = urgent.shift() ?? queued.shift();
    if (!chunk) {
      worker.unref();
      return;
    }
    worker.ref();
    inFlight = chunk;
    worker.postMessage({ id: nextId++, texts: chunk.texts });
  };

  const run = (texts: string[], small: boolean): Promise<{ vectors: Float32Array; tokens: number }> =>
    new Promise((resolve, reject) => {
      (small ? urgent : queued).push({ texts, resolve, reject });
      startWorker().then(pump, (error: Error) => {
        for (const list of [urgent, queued]) {
          for (let i = list.length - 1; i >= 0; i--) list[i]!.reject(error);
          list.length = 0;
        }
      });
    });

  const embedder: LocalEmbedder = {
    specificationVersion: 'v1',
    id: `onnx:${files.sha256.slice(0, 16)}:${files.pooling}${files.normalize ? '+norm' : ''}:${files.maxLength}${int8 ? ':int8' : ''}`,
    dimensions: files.dimensions,
    meaning: true,
    files,
    async embed({ texts, signal }: EmbedRequest): Promise<EmbedResult> {
      signal?.throwIfAborted();
      if (closed) throw new Error('The local embedder is closed.');
      if (texts.length === 0) return { vectors: [], usage: { inputTokens: 0 } };
      const vectors = new Array<Float32Array>(texts.length);
      // Each distinct text not in the cache is embedded once.
      const todo = new Map<string, number[]>();
      texts.forEach((text, index) => {
        const cached = cache?.get(text);
        if (cached) vectors[index] = cached.slice();
        else todo.set(text, [...(todo.get(text) ?? []), index]);
      });
      const distinct = [...todo.keys()];
      if (distinct.length === 0) return { vectors, usage: { inputTokens: 0 } };
      // Longest first, cut into batches: texts of a batch have similar lengths, so little padding.
      const order = distinct.map((_, index) => index).sort((a, b) => distinct[b]!.length - distinct[a]!.length);
      const small = distinct.length <= SMALL_REQUEST;
      const batches: Promise<{ vectors: Float32Array; tokens: number }>[] = [];
      for (let start = 0; start < order.length; start += batchSize) {
        batches.push(run(order.slice(start, start + batchSize).map((index) => distinct[index]!), small));
      }
      const aborted = signal
        ? new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }))
        : null;
      const replies = await (aborted ? Promise.race([Promise.all(batches), aborted]) : Promise.all(batches));
      let inputTokens = 0;
      replies.forEach((reply, batch) => {
        inputTokens += reply.tokens;
        const count = reply.vectors.length / files.dimensions;
        for (let i = 0; i < count; i++) {
          const text = distinct[order[batch * batchSize + i]!]!;
          const vector = reply.vectors.slice(i * files.dimensions, (i + 1) * files.dimensions);
          cache?.set(text, vector);
          for (const index of todo.get(text)!) vectors[index] = vector.slice();
        }
      });
      return { vectors, usage: { inputTokens } };
    },
    async close() {
      if (closed) return;
      closed = true;
      const thread = worker ?? (ready ? await ready.catch(() => null) : null);
      fail(new Error('The local embedder is closed.'));
      await thread?.terminate();
    },
  };
  return embedder;
}
