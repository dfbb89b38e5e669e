import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * The HNSW build, run by a child Node process at the lowest CPU priority. In this process LanceDB's
 * build takes the native runtime's threads for its whole length (measured: an `add` on the table
 * waited for the end of a 6.6 s build even on another handle), so writes and searches stalled
 * behind it; in a child they go on (adds and searches ~20 ms each during the same build) and the
 * niced build only takes the cores the server leaves idle. The child commits the index; the
 * caller then checks out the latest version.
 */
const SCRIPT = `
const [href, spec] = [process.argv[1], JSON.parse(process.argv[2])];
try { require('node:os').setPriority(19); } catch {}
(async () => {
  const lancedb = await import(href);
  const connection = await lancedb.connect(spec.uri, spec.storageOptions ? { storageOptions: spec.storageOptions } : {});
  const table = await connection.openTable(spec.tableName);
  await table.createIndex('vector', { config: lancedb.Index.hnswSq(spec.config), replace: true });
  table.close();
  connection.close();
})().catch((error) => { process.stderr.write(String(error && error.stack || error)); process.exit(1); });
`;

export type BuildSpec = {
  uri: string;
  storageOptions: Record<string, string> | undefined;
  tableName: string;
  config: { distanceType: 'cosine'; numPartitions: number; efConstruction: number };
};

/** Runs the build in a child; `track` receives the child so `close()` can kill it. */
export function buildVectorIndexInChild(spec: BuildSpec, track: (child: ChildProcess | null) => void): Promise<void> {
  const href = pathToFileURL(createRequire(import.meta.url).resolve('@lancedb/lancedb')).href;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SCRIPT, href, JSON.stringify(spec)], { stdio: ['ignore', 'ignore', 'pipe'] });
    track(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.on('error', (error) => {
      track(null);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      track(null);
      if (code === 0) resolve();
      else reject(new Error(`vector index build process ended with ${signal ?? `code ${code}`}: ${stderr.trim()}`));
    });
  });
}
