// Checks every publishable package as npm would pack it: publint (exports, files, fields) and
// @arethetypeswrong/cli with the esm-only profile (the types resolve for every ESM resolution).
// Run after `npm run build`. Exits 1 when any package has an error.
// Usage: node scripts/check-packages.mjs
import { execFileSync } from 'node:child_process';
import { readdirSync, existsSync, readFileSync } from 'node:fs';

const packages = readdirSync('packages')
  .map((name) => `packages/${name}`)
  .filter((dir) => existsSync(`${dir}/package.json`) && !JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')).private);
let failed = 0;
for (const dir of packages) {
  for (const [tool, args] of [
    ['publint', ['publint', dir, '--level', 'warning']],
    ['attw', ['attw', '--pack', dir, '--profile', 'esm-only', '--format', 'table-flipped']],
  ]) {
    try {
      const out = execFileSync('npx', ['--no-install', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      process.stdout.write(`${dir} ${tool}: ok${tool === 'publint' && out.trim() && !/All good/i.test(out) ? `\n${out}` : ''}\n`);
    } catch (error) {
      failed++;
      process.stdout.write(`${dir} ${tool}: FAILED\n${error.stdout ?? ''}${error.stderr ?? ''}\n`);
    }
  }
}
if (failed > 0) {
  process.stderr.write(`check-packages: ${failed} check(s) failed\n`);
  process.exit(1);
}
process.stdout.write(`check-packages: ${packages.length} packages clean (publint, attw --profile esm-only)\n`);
