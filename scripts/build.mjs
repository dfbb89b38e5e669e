// Builds every package in dependency order (core first, server last).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const order = [
  'packages/core',
  'packages/adapter-postgres',
  'packages/adapter-lancedb',
  'packages/ocr-tesseract',
  'packages/models-openai',
  'packages/http',
  'packages/client',
  'packages/ai-sdk',
  'packages/server',
];
for (const dir of order) {
  if (!existsSync(`${dir}/src/index.ts`)) continue;
  execFileSync('npx', ['tsup', '--silent'], { cwd: dir, stdio: 'inherit' });
}
