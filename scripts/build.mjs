// Builds every package in dependency order (core first, server last; scripts/packages.mjs).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PACKAGES } from './packages.mjs';

for (const name of PACKAGES) {
  const dir = `packages/${name}`;
  if (!existsSync(`${dir}/src/index.ts`)) continue;
  execFileSync('npx', ['tsup', '--silent'], { cwd: dir, stdio: 'inherit' });
}
