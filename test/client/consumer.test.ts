import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const project = fileURLToPath(new URL('./consumer/tsconfig.json', import.meta.url));

// A consumer project uses @memory-agents/client as installed (its built dist and .d.ts, not the
// sources) under strict tsc with exactOptionalPropertyTypes and no Node types: every call derived
// from the contract compiles with its typed options and results, and the mistakes marked
// `@ts-expect-error` in consumer.ts are refused (issue 40). Needs `npm run build` first.
describe('the client in a consumer project', () => {
  it('compiles under strict tsc, and refuses the marked mistakes', async () => {
    const result = await run(process.execPath, [tsc, '-p', project], { timeout: 120_000 }).then(
      () => ({ code: 0, output: '' }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, output: error.stdout ?? '' }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });
});
