import ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { planInt8Graph, rewriteInt8Graph } from './int8-graph.js';
import { bytesField, concat, intField } from './protobuf.js';
import { readFile } from 'node:fs/promises';
import { Tokenizer } from '@huggingface/tokenizers';
import { readModelFiles } from './model-files.js';
import { testModelDir } from './test-model.js';

// A small ONNX graph written with the same protobuf helpers, laid out as a weight-only int8 export
// is: Cast(int8 -> float) and Mul(scale) feeding a MatMul (+ bias Add) and a Gather.
const FLOAT = 1;
const INT8 = 3;
const INT64 = 7;
const node = (op: string, inputs: string[], outputs: string[], ints: Record<string, number> = {}) =>
  bytesField(1, concat([...inputs.map((i) => bytesField(1, i)), ...outputs.map((o) => bytesField(2, o)), bytesField(4, op), ...Object.entries(ints).map(([name, value]) => bytesField(5, concat([bytesField(1, name), intField(3, value), intField(20, 2)])))]));
const tensor = (name: string, type: number, dims: number[], data: ArrayBufferView) =>
  bytesField(5, concat([...dims.map((dim) => intField(1, dim)), intField(2, type), bytesField(8, name), bytesField(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))]));
const value = (field: number, name: string, type: number, dims: (number | string)[]) =>
  bytesField(field, concat([bytesField(1, name), bytesField(2, bytesField(1, concat([intField(1, type), bytesField(2, concat(dims.map((dim) => bytesField(1, typeof dim === 'number' ? intField(1, dim) : bytesField(2, dim)))))])))]));
const model = (nodes: Uint8Array[], initializers: Uint8Array[], inputs: Uint8Array[], outputs: Uint8Array[]) =>
  concat([intField(1, 8), bytesField(8, concat([bytesField(1, ''), intField(2, 17)])), bytesField(7, concat([...nodes, bytesField(2, 'g'), ...initializers, ...inputs, ...outputs]))]);

const weights = Int8Array.from([12, -7, 100, -128, 5, 33, 0, 90, -45, 127, -1, 64]); // [4, 3]
const table = Int8Array.from({ length: 20 }, (_, i) => (i * 37) % 255 - 127); // [5, 4]
const int8Graph = model(
  [
    node('Cast', ['w_q'], ['w_f'], { to: FLOAT }),
    node('Mul', ['w_f', 'w_scale'], ['w']),
    node('MatMul', ['x', 'w'], ['xw']),
    node('Add', ['xw', 'bias'], ['y']),
    node('Cast', ['e_q'], ['e_f'], { to: FLOAT }),
    node('Mul', ['e_scale', 'e_f'], ['e']),
    node('Gather', ['e', 'ids'], ['rows']),
  ],
  [
    tensor('w_q', INT8, [4, 3], weights),
    tensor('w_scale', FLOAT, [1, 3], Float32Array.of(0.011, 0.0023, 0.037)),
    tensor('bias', FLOAT, [3], Float32Array.of(0.5, -1, 2)),
    tensor('e_q', INT8, [5, 4], table),
    tensor('e_scale', FLOAT, [5, 1], Float32Array.of(0.1, 0.02, 0.003, 0.4, 0.05)),
  ],
  [value(11, 'x', FLOAT, ['n', 4]), value(11, 'ids', INT64, ['m'])],
  [value(12, 'y', FLOAT, ['n', 3]), value(12, 'rows', FLOAT, ['m', 4])],
);
const x = Float32Array.from({ length: 8 }, (_, i) => Math.sin(i + 1) * 3);
const ids = BigInt64Array.of(4n, 0n, 2n);

async function run(bytes: Uint8Array) {
  const session = await ort.InferenceSession.create(bytes, { graphOptimizationLevel: 'disabled' });
  const out = await session.run({ x: new ort.Tensor('float32', x, [2, 4]), ids: new ort.Tensor('int64', ids, [3]) });
  const result = { y: Array.from(out.y!.data as Float32Array), rows: Array.from(out.rows!.data as Float32Array) };
  await session.release();
  return result;
}

describe('int8 graph rewrite', () => {
  it('finds the weight-only int8 MatMul and Gather', () => {
    expect(planInt8Graph(int8Graph)).toEqual({ matmuls: 1, gathers: 1 });
  });

  it('Gather alone (matmuls: keep): the same numbers, bit for bit', async () => {
    const rewritten = rewriteInt8Graph(int8Graph, { matmuls: 'keep' })!;
    expect(rewritten.plan).toEqual({ matmuls: 0, gathers: 1 });
    expect(await run(rewritten.bytes)).toEqual(await run(int8Graph));
  });

  it('MatMul weights dequantized once (matmuls: float32): the same numbers, and no Cast left to run', async () => {
    const rewritten = rewriteInt8Graph(int8Graph, { matmuls: 'float32' })!;
    expect(rewritten.plan).toEqual({ matmuls: 1, gathers: 1 });
    expect(await run(rewritten.bytes)).toEqual(await run(int8Graph));
    expect(Buffer.from(rewritten.bytes).includes('w_q')).toBe(false); // the int8 weight is gone, its float32 product in its place
  });

  it('MatMul in int8 with the bias folded in: close to float32, the Gather still exact', async () => {
    const rewritten = rewriteInt8Graph(int8Graph)!;
    expect(rewritten.plan).toEqual({ matmuls: 1, gathers: 1 });
    const [exact, int8] = [await run(int8Graph), await run(rewritten.bytes)];
    expect(int8.rows).toEqual(exact.rows);
    const scale = Math.max(...exact.y.map(Math.abs));
    int8.y.forEach((v, i) => expect(Math.abs(v - exact.y[i]!)).toBeLessThan(0.02 * scale));
    expect(int8.y).not.toEqual(exact.y); // it really multiplied in int8
  });

  it('leaves other graphs alone: float weights, a scale per row on a MatMul, bytes that are not protobuf', () => {
    const float = model([node('MatMul', ['x', 'w'], ['y'])], [tensor('w', FLOAT, [4, 3], new Float32Array(12))], [value(11, 'x', FLOAT, ['n', 4])], [value(12, 'y', FLOAT, ['n', 3])]);
    expect(planInt8Graph(float)).toEqual({ matmuls: 0, gathers: 0 });
    expect(rewriteInt8Graph(float)).toBeNull();
    const perRow = model(
      [node('Cast', ['w_q'], ['w_f'], { to: FLOAT }), node('Mul', ['w_f', 's'], ['w']), node('MatMul', ['x', 'w'], ['y'])],
      [tensor('w_q', INT8, [4, 3], weights), tensor('s', FLOAT, [4, 1], new Float32Array(4).fill(0.1))],
      [value(11, 'x', FLOAT, ['n', 4])],
      [value(12, 'y', FLOAT, ['n', 3])],
    );
    expect(planInt8Graph(perRow)).toEqual({ matmuls: 0, gathers: 0 });
    expect(planInt8Graph(new TextEncoder().encode('not a model'))).toEqual({ matmuls: 0, gathers: 0 });
  });
});

const realModel = testModelDir('int8 graph rewrite on the real model');
describe.skipIf(!realModel)('int8 graph rewrite on all-MiniLM-L6-v2 int8', () => {
  it('rewrites 36 MatMuls and 2 Gathers; dequantized once, the hidden states match the graph as shipped', async () => {
    const files = await readModelFiles(realModel!);
    const bytes = await readFile(files.onnx);
    const rewritten = rewriteInt8Graph(bytes, { matmuls: 'float32' })!;
    expect(rewritten.plan).toEqual({ matmuls: 36, gathers: 2 });
    const ids = new Tokenizer(files.tokenizer, files.tokenizerConfig).encode('Alice: Big news: I moved to Berlin in March').ids;
    const feeds = () => ({
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
      token_type_ids: new ort.Tensor('int64', new BigInt64Array(ids.length), [1, ids.length]),
    });
    const hidden = async (model: Uint8Array) => {
      const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled' });
      const out = await session.run(feeds());
      const data = out[session.outputNames[0]!]!.data as Float32Array;
      await session.release();
      return data;
    };
    const [shipped, once] = [await hidden(bytes), await hidden(rewritten.bytes)];
    expect(once.length).toBe(shipped.length);
    let worst = 0;
    for (let i = 0; i < once.length; i++) worst = Math.max(worst, Math.abs(once[i]! - shipped[i]!));
    expect(worst).toBeLessThan(1e-5);
  });
});
