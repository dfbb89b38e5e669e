// Usage: npm run generate -w @memory-agents/client
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { GENERATED_FILE, generateOpenApiTypes } from './openapi-types.js';
import { OPERATIONS_FILE, generateOperationsTable } from './operations-table.js';

await writeFile(GENERATED_FILE, await generateOpenApiTypes());
console.log(`wrote ${fileURLToPath(GENERATED_FILE)}`);
await writeFile(OPERATIONS_FILE, generateOperationsTable());
console.log(`wrote ${fileURLToPath(OPERATIONS_FILE)}`);
