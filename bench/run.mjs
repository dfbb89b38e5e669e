// `npm run bench [-- name ...]`: builds, then runs the named benchmarks (default: all of DEFAULT)
// one after another. Results print to stdout; docs/benchmarks.md records them with machine and date.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const DEFAULT = ['learning-throughput', 'bulk-import', 'chat-latency', 'rate-limit-overhead', 'index-latency', 'ocr-accuracy', 'document-ingest', 'reliability-fuzz'];
// Heavy runs (minutes, GBs) or ones that need a PostgreSQL server (DATABASE_URL): only when named.
// index-scale takes `--backend` and `--size`; multi-process takes `--rounds`, `--agents`, ...
const ON_REQUEST = ['index-scale', 'multi-process'];

const names = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const passThrough = process.argv.slice(2).filter((arg) => arg.startsWith('-'));
if (process.argv.includes('--list')) {
  console.log(`default: ${DEFAULT.join(', ')}\non request: ${ON_REQUEST.join(', ')}`);
  process.exit(0);
}
const selected = names.length > 0 ? names : DEFAULT;
for (const name of selected) {
  if (!existsSync(`bench/${name}.ts`)) {
    console.error(`no benchmark bench/${name}.ts (try --list)`);
    process.exit(2);
  }
}
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
for (const name of selected) {
  console.log(`\n=== ${name} ===`);
  execFileSync('npx', ['tsx', `bench/${name}.ts`, ...passThrough], { stdio: 'inherit' });
}
