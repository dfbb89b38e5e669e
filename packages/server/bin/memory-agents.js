#!/usr/bin/env node
// The `memory-agents` command. A committed shim, so npm links the bin on the very first
// `npm install` (npm links workspace bins before `prepare` builds dist/), and a missing build says
// what to do instead of failing with a module-not-found stack.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write(
    'memory-agents: the CLI is not built (packages/server/dist/cli.js is missing).\n' +
      'In a clone of the repository run `npm install` (it builds every package) or `npm run build`.\n',
  );
  process.exit(1);
}
await import(cli.href);
