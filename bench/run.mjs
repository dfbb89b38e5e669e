// `npm run bench [-- name ... [--flag value ...] [-- positional ...]]`: builds, then runs the named
// benchmarks (default: all of DEFAULT) one after another. The names come first; every argument from
// the first one starting with `-` on is passed to each benchmark (a lone `--` is dropped, for
// benchmarks that take positional arguments). Results print to stdout; docs/benchmarks.md records
// them with machine and date.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const DEFAULT = ['learning-throughput', 'bulk-import', 'chat-latency', 'rate-limit-overhead', 'index-latency', 'ocr-accuracy', 'document-ingest', 'reliability-fuzz'];
// Heavy runs (minutes, GBs) or ones that need a PostgreSQL server (DATABASE_URL): only when named.
// index-scale takes `--backend` and `--size`; multi-process takes `--rounds`, `--agents`, ...
// index-probe and pg-channels profile a table index-scale kept (`--uri DIR`, `--schema NAME`):
//   npm run bench -- index-probe -- DIR agent_main 200 adapter,bothIdsPost
//   DATABASE_URL=... npm run bench -- pg-channels -- kept100k
const ON_REQUEST = ['index-scale', 'multi-process', 'index-probe', 'pg-channels', 'inspector'];

const args = process.argv.slice(2);
const firstFlag = args.findIndex((arg) => arg.startsWith('-'));
const names = firstFlag < 0 ? args : args.slice(0, firstFlag);
const passThrough = firstFlag < 0 ? [] : args.slice(args[firstFlag] === '--' ? firstFlag + 1 : firstFlag);
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
