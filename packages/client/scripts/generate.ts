// Usage: npm run generate -w @memory-agents/client
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { GENERATED_FILE, generateOpenApiTypes } from './openapi-types.js';

await writeFile(GENERATED_FILE, await generateOpenApiTypes());
console.log(`wrote ${fileURLToPath(GENERATED_FILE)}`);
