// The native and WebAssembly dependencies, loaded and used once on the running Node line: LanceDB
// (N-API: a table, a vector search), @napi-rs/canvas (N-API: draw and encode a PNG), esbuild (its
// platform binary: a transform), PGlite (WebAssembly PostgreSQL: a query), onnxruntime-node (N-API:
// the local embedder's model runs once when the test model is in the cache) and tesseract.js
// (WebAssembly in a worker thread: OCR of the PNG drawn here). One `npm install` serves every line
// (N-API and WebAssembly do not depend on the Node ABI); `.ci/run` runs this under each line.
// Usage: node scripts/native-check.mjs   (or scripts/with-node.sh 24 node scripts/native-check.mjs)
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';

// Resolved from the workspaces that depend on them (npm may keep them out of the root node_modules).
const require = createRequire(new URL('../packages/documents/package.json', import.meta.url));
const load = (name, from) => import(createRequire(new URL(`../packages/${from}/package.json`, import.meta.url)).resolve(name));
const results = [];
const check = async (name, run) => {
  const started = performance.now();
  try {
    const detail = await run();
    results.push(`  ok   ${name}: ${detail} (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    results.push(`  FAIL ${name}: ${error instanceof Error ? error.stack : String(error)}`);
  }
};
const dir = await mkdtemp(path.join(tmpdir(), 'ma-native-'));
let png;
try {
  await check('@lancedb/lancedb', async () => {
    const lancedb = await load('@lancedb/lancedb', 'adapter-lancedb');
    const db = await lancedb.connect(path.join(dir, 'lance'));
    const table = await db.createTable('t', [{ id: 'a', vector: [1, 0, 0] }, { id: 'b', vector: [0, 1, 0] }]);
    const hits = await table.vectorSearch([0.9, 0.1, 0]).limit(1).toArray();
    if (hits[0]?.id !== 'a') throw new Error(`nearest was ${hits[0]?.id}`);
    return 'created a table, nearest neighbour found';
  });
  await check('@napi-rs/canvas', async () => {
    const { createCanvas } = await load('@napi-rs/canvas', 'documents');
    const canvas = createCanvas(640, 160);
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, 640, 160);
    ctx.fillStyle = '#000';
    ctx.font = '64px sans-serif';
    ctx.fillText('INVOICE 4711', 30, 105);
    png = canvas.toBuffer('image/png');
    if (png.subarray(1, 4).toString() !== 'PNG') throw new Error('not a PNG');
    return `drew and encoded a ${png.length}-byte PNG`;
  });
  await check('esbuild', async () => {
    const esbuild = await import(createRequire(import.meta.url).resolve('esbuild'));
    const { code } = await esbuild.transform('const x: number = 1; export default x;', { loader: 'ts' });
    if (!code.includes('const x = 1')) throw new Error(code);
    return `esbuild ${esbuild.version} transformed TypeScript`;
  });
  await check('@electric-sql/pglite', async () => {
    const { PGlite } = await load('@electric-sql/pglite', 'adapter-postgres');
    const db = new PGlite();
    const { rows } = await db.query("SELECT 40 + 2 AS answer, version() AS v");
    await db.close();
    if (rows[0].answer !== 42) throw new Error(JSON.stringify(rows));
    return String(rows[0].v).split(' on ')[0];
  });
  await check('onnxruntime-node', async () => {
    // The local embedder's runtime (N-API, CPU binaries inside the npm package); with the test model
    // in the cache (scripts/fetch-test-model.sh) it also runs it once.
    const ort = (await load('onnxruntime-node', 'local-embedder')).default;
    const models = process.env.MEMORY_AGENTS_MODELS_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'memory-agents', 'models');
    const model = path.join(models, 'all-MiniLM-L6-v2-int8', 'model.onnx');
    if (!existsSync(model)) return `loaded (backends: ${ort.listSupportedBackends().map((backend) => backend.name).join(', ')}); no test model at ${model} to run`;
    const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
    const ids = new ort.Tensor('int64', BigInt64Array.from([101n, 7592n, 102n]), [1, 3]);
    const mask = new ort.Tensor('int64', BigInt64Array.from([1n, 1n, 1n]), [1, 3]);
    const types = new ort.Tensor('int64', new BigInt64Array(3), [1, 3]);
    const out = await session.run({ input_ids: ids, attention_mask: mask, token_type_ids: types });
    const dims = out[session.outputNames[0]].dims;
    if (dims.join(',') !== '1,3,384') throw new Error(`output dims ${dims}`);
    return 'ran all-MiniLM-L6-v2 (int8) on 3 tokens';
  });
  await check('tesseract.js', async () => {
    if (!png) throw new Error('no image (the canvas check failed)');
    const tesseractRequire = createRequire(new URL('../packages/ocr-tesseract/package.json', import.meta.url));
    const { createWorker, OEM } = await import(tesseractRequire.resolve('tesseract.js'));
    const langPath = path.join(path.dirname(tesseractRequire.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
    const worker = await createWorker('eng', OEM.LSTM_ONLY, { langPath, gzip: true, cacheMethod: 'none', logger: () => {}, errorHandler: () => {} });
    try {
      const { data } = await worker.recognize(png);
      if (!/INVOICE\s*4711/.test(data.text)) throw new Error(`read ${JSON.stringify(data.text)}`);
      return `read "${data.text.trim()}"`;
    } finally {
      await worker.terminate();
    }
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(`native and WebAssembly dependencies on Node ${process.versions.node} (N-API ${process.versions.napi}, ${process.platform}-${process.arch}):\n${results.join('\n')}`);
if (results.some((line) => line.startsWith('  FAIL'))) process.exit(1);
