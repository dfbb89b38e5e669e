import { readFile, readdir } from 'node:fs/promises';
import { ERROR_CODES as CORE_ERROR_CODES } from '@memory-agents/core';
import { describe, expect, it } from 'vitest';
import { GENERATED_FILE, generateOpenApiTypes } from '../scripts/openapi-types.js';
import { OPERATIONS_FILE, generateOperationsTable } from '../scripts/operations-table.js';
import { ERROR_CODES } from './errors.js';

describe('generated types', () => {
  it('match the OpenAPI document of the current route table (regenerate: npm run generate -w @memory-agents/client)', async () => {
    const committed = await readFile(GENERATED_FILE, 'utf8');
    const fresh = await generateOpenApiTypes();
    // A plain boolean first, so a failure says what to run instead of printing 4,000 lines of diff.
    expect(committed === fresh, 'packages/client/src/generated/openapi.ts is stale: run `npm run generate -w @memory-agents/client` and commit it').toBe(true);
  });

  it('and the operation table match the contract (regenerate: npm run generate -w @memory-agents/client)', async () => {
    const committed = await readFile(OPERATIONS_FILE, 'utf8');
    expect(committed === generateOperationsTable(), 'packages/client/src/generated/operations.ts is stale: run `npm run generate -w @memory-agents/client` and commit it').toBe(true);
  });

  it('name the same error codes as the code table of the server', () => {
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(CORE_ERROR_CODES).sort());
  });
});

describe('the main entry', () => {
  it('imports no node: module (it runs on Bun, Deno and edge runtimes)', async () => {
    const directory = new URL('./', import.meta.url);
    const files = (await readdir(directory, { recursive: true })).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && file !== 'node.ts');
    expect(files).toContain('create-client.ts');
    for (const file of files) {
      // Code only: TSDoc examples may mention process.env.
      const text = (await readFile(new URL(file, directory), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      expect(text, file).not.toMatch(/from ['"](node:|fs|path|http|stream|buffer)['"/]/);
      expect(text, file).not.toMatch(/\b(process|Buffer|require)\./);
    }
  });
});
