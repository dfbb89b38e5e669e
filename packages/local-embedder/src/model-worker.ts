/**
 * The worker thread that runs the model: tokenizes a batch, runs the ONNX graph on the CPU and pools
 * the token vectors into one vector per text. `InferenceSession.run` in onnxruntime-node holds the
 * calling thread for the whole run (measured: a 333 ms batch let no timer of the event loop fire), so
 * it must not run on the thread that serves requests.
 *
 * Protocol: `workerData` is a {@link WorkerSetup}; the parent then posts {@link WorkerRequest}s one at
 * a time and gets one {@link WorkerReply} for each, in order. The first message the worker posts is
 * `{ type: 'ready' }` or `{ type: 'failed', message }`.
 */
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { Tokenizer } from '@huggingface/tokenizers';
import ort from 'onnxruntime-node';
import { rewriteInt8Graph } from './int8-graph.js';
import type { ModelFiles } from './model-files.js';

/** `int8`: multiply in int8 where the graph dequantizes int8 weights for a MatMul, else in float32 (see int8-graph.ts). */
export type WorkerSetup = { files: ModelFiles; threads: number; int8: boolean };
export type WorkerRequest = { id: number; texts: string[] };
export type WorkerReply =
  | { type: 'vectors'; id: number; vectors: Float32Array; tokens: number }
  | { type: 'error'; id: number; message: string }
  | { type: 'ready' }
  | { type: 'failed'; message: string };

/** Characters kept before tokenizing: far more than `maxLength` word pieces need, so cutting costs nothing. */
const CHARS_PER_TOKEN_BOUND = 12;

/**
 * A weight-only int8 graph runs rewritten (int8-graph.ts): each run no longer turns every weight
 * back into float32. Other graphs load from their file as they are. (A function of its own, so the
 * file's and the rewrite's buffers are garbage once the session holds the graph.)
 */
async function createSession(path: string, int8: boolean, options: ort.InferenceSession.SessionOptions): Promise<ort.InferenceSession> {
  const rewritten = rewriteInt8Graph(await readFile(path), { matmuls: int8 ? 'int8' : 'float32' });
  return rewritten ? await ort.InferenceSession.create(rewritten.bytes, options) : await ort.InferenceSession.create(path, options);
}

async function start(setup: WorkerSetup): Promise<(request: WorkerRequest) => Promise<WorkerReply>> {
  const { files } = setup;
  const options: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: setup.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    // No graph rewriting by onnxruntime: its rewrites fold an int8 graph's weights back into float32
    // (measured on all-MiniLM-L6-v2 int8: +182 MB at load against +52 MB).
    graphOptimizationLevel: 'disabled',
    // The arena keeps the largest batch's buffers for the process's life (measured: +150 MB RSS).
    enableCpuMemArena: false,
    // ORT's pool threads spin while they wait for work: in a server sharing its cores with the HTTP
    // thread and the database, a spinning thread holds a core the others need.
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  };
  const session = await createSession(files.onnx, setup.int8, options);
  const tokenizer = new Tokenizer(files.tokenizer, files.tokenizerConfig);
  // What the tokenizer adds around every text ([CLS] ... [SEP] for BERT): kept when a text is cut.
  const specials = tokenizer.encode('').ids;
  const tail = specials.length >= 2 ? specials.slice(1) : [];
  const wantsTypes = session.inputNames.includes('token_type_ids');
  const output = session.outputNames[0]!;
  const dims = files.dimensions;

  /** Vectors of texts already tokenized, in one run of the graph (rows padded to the longest). */
  const runGraph = async (encoded: number[][], vectors: Float32Array): Promise<void> => {
    const batch = encoded.length;
    const length = Math.max(1, ...encoded.map((ids) => ids.length));
    const inputIds = new BigInt64Array(batch * length);
    const mask = new BigInt64Array(batch * length);
    encoded.forEach((ids, row) => {
      for (let i = 0; i < ids.length; i++) {
        inputIds[row * length + i] = BigInt(ids[i]!);
        mask[row * length + i] = 1n;
      }
    });
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', inputIds, [batch, length]),
      attention_mask: new ort.Tensor('int64', mask, [batch, length]),
    };
    if (wantsTypes) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(batch * length), [batch, length]);
    const result = await session.run(feeds);
    const tensor = result[output]!;
    const hidden = tensor.data as Float32Array;
    const pooled = tensor.dims.length === 2; // a graph that pools itself: [batch, dims]
    for (let row = 0; row < batch; row++) {
      const target = vectors.subarray(row * dims, (row + 1) * dims);
      if (pooled) target.set(hidden.subarray(row * dims, (row + 1) * dims));
      else pool(hidden, row, length, dims, encoded[row]!.length, files.pooling, target);
      if (files.normalize) normalize(target);
    }
    for (const value of Object.values(result)) value.dispose();
  };

  // Each text runs alone: no padding, and no batch-mate changes its vector (multiplying in int8, the
  // graph quantizes its activations over the whole run). Once the weights are no longer dequantized
  // on every run, a batch saves nothing measurable, and one text's buffers are small.
  return async ({ id, texts }) => {
    const encoded = texts.map((text) => {
      const ids = tokenizer.encode(text.length > files.maxLength * CHARS_PER_TOKEN_BOUND ? text.slice(0, files.maxLength * CHARS_PER_TOKEN_BOUND) : text).ids;
      return ids.length <= files.maxLength ? ids : [...ids.slice(0, files.maxLength - tail.length), ...tail];
    });
    const vectors = new Float32Array(texts.length * dims);
    for (let row = 0; row < encoded.length; row++) await runGraph([encoded[row]!], vectors.subarray(row * dims, (row + 1) * dims));
    return { type: 'vectors', id, vectors, tokens: encoded.reduce((sum, ids) => sum + ids.length, 0) };
  };
}

/** Pools row `row` of `[batch, length, dims]` hidden states over its first `count` tokens into `target`. */
function pool(hidden: Float32Array, row: number, length: number, dims: number, count: number, pooling: ModelFiles['pooling'], target: Float32Array): void {
  const base = row * length * dims;
  if (pooling === 'cls') {
    target.set(hidden.subarray(base, base + dims));
    return;
  }
  if (pooling === 'max') {
    target.fill(Number.NEGATIVE_INFINITY);
    for (let t = 0; t < count; t++) for (let d = 0; d < dims; d++) target[d] = Math.max(target[d]!, hidden[base + t * dims + d]!);
    return;
  }
  for (let t = 0; t < count; t++) for (let d = 0; d < dims; d++) target[d]! += hidden[base + t * dims + d]!;
  for (let d = 0; d < dims; d++) target[d]! /= Math.max(1, count);
}

function normalize(vector: Float32Array): void {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let d = 0; d < vector.length; d++) vector[d]! /= norm;
}

if (parentPort) {
  const port = parentPort;
  start(workerData as WorkerSetup).then(
    (run) => {
      // One request at a time, in order: the session's own threads do the parallel work.
      let chain = Promise.resolve();
      port.on('message', (request: WorkerRequest) => {
        chain = chain.then(async () => {
          let reply: WorkerReply;
          try {
            reply = await run(request);
          } catch (error) {
            reply = { type: 'error', id: request.id, message: error instanceof Error ? error.message : String(error) };
          }
          port.postMessage(reply, reply.type === 'vectors' ? [reply.vectors.buffer as ArrayBuffer] : []);
        });
      });
      port.postMessage({ type: 'ready' } satisfies WorkerReply);
    },
    (error: unknown) => port.postMessage({ type: 'failed', message: error instanceof Error ? error.message : String(error) } satisfies WorkerReply),
  );
}
