import { mkdtemp, rm, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEmbedderConformance } from '@memory-agents/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { localEmbedder, type LocalEmbedder } from './local-embedder.js';
import { ModelFilesError, readModelFiles } from './model-files.js';
import { testModelDir } from './test-model.js';

const model = testModelDir('local embedder (real sentence model)');

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

describe.skipIf(!model)('local embedder on all-MiniLM-L6-v2 (int8 ONNX)', () => {
  const opened: LocalEmbedder[] = [];
  const open = async (options: { threads?: number; batchSize?: number; cacheSize?: number; int8?: boolean } = {}) => {
    const embedder = await localEmbedder({ model: model!, threads: 1, ...options });
    opened.push(embedder);
    return embedder;
  };
  afterAll(async () => {
    await Promise.all(opened.map((embedder) => embedder.close()));
  });

  describeEmbedderConformance({
    name: 'local all-MiniLM-L6-v2',
    create: async () => {
      const port = await localEmbedder({ model: model!, threads: 1 });
      return { port, cleanup: () => port.close() };
    },
  });

  it('reads the model config: 384 dimensions, mean pooling, normalised, 256 tokens; the id names the graph', async () => {
    const embedder = await open();
    expect(embedder.dimensions).toBe(384);
    expect(embedder.files).toMatchObject({ pooling: 'mean', normalize: true, maxLength: 256 });
    expect(embedder.id).toBe('onnx:8199be6f699a395f:mean+norm:256');
  });

  it('int8: true multiplies in int8: another id, vectors within cosine 0.98 of the float32 ones', async () => {
    const fast = await open({ int8: true });
    expect(fast.id).toBe('onnx:8199be6f699a395f:mean+norm:256:int8');
    const texts = ['Alice: Big news: I moved to Berlin in March', 'Where does Alice live?', 'the quarterly report is due Friday'];
    const [int8, float] = [(await fast.embed({ texts })).vectors, (await (await open()).embed({ texts })).vectors];
    texts.forEach((_, i) => {
      expect(cosine(int8[i]!, float[i]!)).toBeGreaterThan(0.98);
      expect(Array.from(int8[i]!)).not.toEqual(Array.from(float[i]!));
    });
  });

  it('matches meaning with no shared word: "Where does Alice live?" is nearest "I moved to Berlin in March"', async () => {
    const embedder = await open();
    const { vectors } = await embedder.embed({ texts: ['Where does Alice live?', 'Alice: Big news: I moved to Berlin in March', 'Bob: My brother lives in Porto', 'Bob: the quarterly report is due Friday'] });
    const [question, berlin, porto, report] = vectors as [Float32Array, Float32Array, Float32Array, Float32Array];
    expect(cosine(question, berlin)).toBeGreaterThan(cosine(question, porto));
    expect(cosine(question, porto)).toBeGreaterThan(cosine(question, report));
    // Unit length: cosine is the dot product.
    expect(cosine(berlin, berlin)).toBeCloseTo(1, 5);
  });

  it('gives the same vector for a text alone, in a batch of longer texts, and across batch sizes', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `Turn ${i}: ${'we talked about the garden and the roses '.repeat(1 + (i % 5))}`);
    const batched = await (await open({ batchSize: 16 })).embed({ texts });
    const single = await (await open({ batchSize: 1 })).embed({ texts });
    for (let i = 0; i < texts.length; i++) expect(Array.from(single.vectors[i]!)).toEqual(Array.from(batched.vectors[i]!));
  });

  it('cuts a text at the model maximum: two texts equal in their first 256 tokens embed the same', async () => {
    const embedder = await open();
    const { vectors, usage } = await embedder.embed({ texts: ['word '.repeat(300), 'word '.repeat(3000)] });
    expect(Array.from(vectors[1]!)).toEqual(Array.from(vectors[0]!));
    expect(usage).toEqual({ inputTokens: 512 });
  });

  it('never blocks the event loop: timers fire while a large batch embeds', async () => {
    const embedder = await open();
    await embedder.embed({ texts: ['warm up'] });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await embedder.embed({ texts: Array.from({ length: 64 }, (_, i) => `Caroline said something long about her plans number ${i} `.repeat(4)) });
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
  });

  it('answers a short request (a query) before a queued learning batch finishes', async () => {
    const embedder = await open({ batchSize: 8 });
    await embedder.embed({ texts: ['warm up'] });
    const order: string[] = [];
    const learning = embedder.embed({ texts: Array.from({ length: 64 }, (_, i) => `memory ${i} about travel plans and the weather`) }).then(() => order.push('learning'));
    const query = embedder.embed({ texts: ['where is Alice?'] }).then(() => order.push('query'));
    await Promise.all([learning, query]);
    expect(order).toEqual(['query', 'learning']);
  });

  it('rejects once closed, and closing twice is fine', async () => {
    const embedder = await localEmbedder({ model: model!, threads: 1 });
    await embedder.embed({ texts: ['hello'] });
    await embedder.close();
    await embedder.close();
    await expect(embedder.embed({ texts: ['hello'] })).rejects.toThrow(/closed/);
  });

  it('rejects a request aborted while it waits, and keeps serving others', async () => {
    const embedder = await open({ batchSize: 4 });
    const controller = new AbortController();
    const pending = embedder.embed({ texts: Array.from({ length: 40 }, (_, i) => `text ${i}`), signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
    expect((await embedder.embed({ texts: ['still here'] })).vectors).toHaveLength(1);
  });

  it('embeds a repeated text once, and answers a recent one from its cache (no tokens)', async () => {
    const embedder = await open();
    const first = await embedder.embed({ texts: ['Thanks!', 'I moved to Berlin.', 'Thanks!'] });
    const once = (await embedder.embed({ texts: ['Thanks!'] })).vectors[0]!;
    expect(Array.from(first.vectors[2]!)).toEqual(Array.from(first.vectors[0]!));
    expect(first.usage!.inputTokens).toBe((await (await open({ cacheSize: 0 })).embed({ texts: ['Thanks!', 'I moved to Berlin.'] })).usage!.inputTokens);
    const again = await embedder.embed({ texts: ['I moved to Berlin.', 'Thanks!'] });
    expect(again.usage).toEqual({ inputTokens: 0 });
    expect(Array.from(again.vectors[0]!)).toEqual(Array.from(first.vectors[1]!));
    // A caller changing a returned vector changes no other caller's.
    once.fill(0);
    expect(Array.from((await embedder.embed({ texts: ['Thanks!'] })).vectors[0]!)).toEqual(Array.from(first.vectors[0]!));
  });

  it('with cacheSize 0 keeps nothing: the same text costs its tokens again', async () => {
    const embedder = await open({ cacheSize: 0 });
    const first = await embedder.embed({ texts: ['hello there'] });
    const second = await embedder.embed({ texts: ['hello there'] });
    expect(second.usage!.inputTokens).toBe(first.usage!.inputTokens);
    expect(Array.from(second.vectors[0]!)).toEqual(Array.from(first.vectors[0]!));
  });

  it('refuses bad options with a clear message', async () => {
    await expect(localEmbedder({ model: model!, cacheSize: -1 })).rejects.toThrow(/cacheSize must be an integer >= 0/);
    await expect(localEmbedder({ model: model!, threads: 0 })).rejects.toThrow(/threads must be a positive integer/);
    await expect(localEmbedder({ model: model!, batchSize: 1.5 })).rejects.toThrow(/batchSize must be a positive integer/);
  });

  describe('model directories', () => {
    const scratch: string[] = [];
    afterAll(async () => {
      await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
    });
    const copy = async () => {
      const dir = await mkdtemp(join(tmpdir(), 'local-embedder-'));
      scratch.push(dir);
      await cp(model!, dir, { recursive: true });
      return dir;
    };

    it('names the missing directory, graph or tokenizer', async () => {
      await expect(readModelFiles('/nonexistent/model')).rejects.toThrow(ModelFilesError);
      await expect(readModelFiles('/nonexistent/model')).rejects.toThrow(/does not exist/);
      const noTokenizer = await copy();
      await rm(join(noTokenizer, 'tokenizer.json'));
      await expect(readModelFiles(noTokenizer)).rejects.toThrow(/no tokenizer\.json/);
      const noGraph = await copy();
      await rm(join(noGraph, 'model.onnx'));
      await rm(join(noGraph, 'memory-agents-model.json'));
      await expect(readModelFiles(noGraph)).rejects.toThrow(/no ONNX model/);
    });

    it('computes the checksum when no manifest lists it, and reads cls pooling from the config', async () => {
      const dir = await copy();
      await rm(join(dir, 'memory-agents-model.json'));
      await writeFile(join(dir, '1_Pooling', 'config.json'), JSON.stringify({ word_embedding_dimension: 384, pooling_mode_cls_token: true }));
      const files = await readModelFiles(dir);
      expect(files.sha256).toBe('8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6');
      expect(files.pooling).toBe('cls');
      const embedder = await localEmbedder({ model: dir, threads: 1 });
      opened.push(embedder);
      expect(embedder.id).toBe('onnx:8199be6f699a395f:cls+norm:256');
    });

    it('a graph that is not ONNX fails the first call with a message naming the directory', async () => {
      const dir = await copy();
      await writeFile(join(dir, 'model.onnx'), 'not a model');
      await rm(join(dir, 'memory-agents-model.json'));
      const embedder = await localEmbedder({ model: dir, threads: 1 });
      opened.push(embedder);
      await expect(embedder.embed({ texts: ['x'] })).rejects.toThrow(/could not be loaded/);
    });
  });
});
