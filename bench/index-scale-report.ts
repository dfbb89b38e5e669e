/**
 * Turns bench/results/index-scale.jsonl (written by bench/index-scale.ts) into the markdown table
 * of docs/benchmarks.md ("Memory index at scale") and the plot docs/index-latency.svg
 * (search p50/p95 against memories, log-log axes). No plotting dependency: the SVG is written here.
 *
 *   npx tsx bench/index-scale-report.ts [--in bench/results/index-scale.jsonl] [--svg docs/index-latency.svg]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argument } from './support/args.js';

const here = dirname(fileURLToPath(import.meta.url));

type Run = {
  backend: string; size: number; failed?: boolean; p50: number; p95: number; queries: number; upsertPerSecond: number;
  embedPerSecond: number; settleSeconds: number; rssBaselineMb: number; rssLoadedMb: number; rssEndMb: number; rssPeakMb: number; load: string; batch: number; date: string;
};

const BACKENDS = ['in-memory', 'lancedb', 'pglite', 'postgres'];
const COLORS: Record<string, string> = { 'in-memory': '#1b9e77', lancedb: '#d95f02', pglite: '#7570b3', postgres: '#e7298a' };

const lines = (await readFile(argument('in', join(here, 'results/index-scale.jsonl')), 'utf8')).split('\n').filter(Boolean);
// The last successful run of each backend and size wins.
const runs = new Map<string, Run>();
for (const line of lines) {
  const run = JSON.parse(line) as Run;
  if (!run.failed) runs.set(`${run.backend}:${run.size}`, run);
}
const sorted = [...runs.values()].sort((a, b) => BACKENDS.indexOf(a.backend) - BACKENDS.indexOf(b.backend) || a.size - b.size);

const ms = (value: number) => (value < 10 ? value.toFixed(1) : Math.round(value).toLocaleString('en'));
console.log('| index | memories | search p50 ms | search p95 ms | queries | upsert memories/s | settle s | RSS loaded / end / peak MB | load avg |');
console.log('|-|-:|-:|-:|-:|-:|-:|-:|-:|');
for (const run of sorted) {
  console.log(
    `| ${run.backend} | ${run.size.toLocaleString('en')} | ${ms(run.p50)} | ${ms(run.p95)} | ${run.queries} | ${run.upsertPerSecond.toLocaleString('en')} | ` +
      `${run.settleSeconds} | ${run.rssLoadedMb} / ${run.rssEndMb} / ${run.rssPeakMb} | ${run.load} |`,
  );
}

// The plot: x = memories (log), y = latency ms (log); p95 solid, p50 dashed; the two targets as marks.
const width = 720;
const height = 440;
const margin = { left: 70, right: 150, top: 40, bottom: 55 };
const xs = [1e4, 1e5, 1e6];
const allLatencies = sorted.flatMap((run) => [run.p50, run.p95]);
const yMin = 10 ** Math.floor(Math.log10(Math.min(1, ...allLatencies)));
const yMax = 10 ** Math.ceil(Math.log10(Math.max(100, ...allLatencies)));
const x = (size: number) => margin.left + ((Math.log10(size) - 4) / 2) * (width - margin.left - margin.right);
const y = (latency: number) => height - margin.bottom - ((Math.log10(latency) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * (height - margin.top - margin.bottom);
const parts: string[] = [];
parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
parts.push(`<text x="${margin.left}" y="22" font-size="14" font-weight="bold">Memory index: search latency (both channels, 50 hits each) vs size</text>`);
for (let exponent = Math.log10(yMin); exponent <= Math.log10(yMax); exponent++) {
  const value = 10 ** exponent;
  parts.push(`<line x1="${margin.left}" x2="${width - margin.right}" y1="${y(value)}" y2="${y(value)}" stroke="#ddd"/>`);
  parts.push(`<text x="${margin.left - 8}" y="${y(value) + 4}" text-anchor="end">${value >= 1 ? value.toLocaleString('en') : value} ms</text>`);
}
for (const size of xs) {
  parts.push(`<line x1="${x(size)}" x2="${x(size)}" y1="${margin.top}" y2="${height - margin.bottom}" stroke="#ddd"/>`);
  parts.push(`<text x="${x(size)}" y="${height - margin.bottom + 18}" text-anchor="middle">${size.toLocaleString('en')}</text>`);
}
parts.push(`<text x="${(margin.left + width - margin.right) / 2}" y="${height - 12}" text-anchor="middle">memories of the searched agent's index (log scale)</text>`);
parts.push(`<text transform="translate(16 ${(margin.top + height - margin.bottom) / 2}) rotate(-90)" text-anchor="middle">latency (log scale)</text>`);
// Targets for LanceDB: p95 <= 10 ms at 100k, <= 50 ms at 1M.
for (const [size, target] of [[1e5, 10], [1e6, 50]] as const) {
  parts.push(`<path d="M${x(size) - 8} ${y(target)} h16" stroke="#d95f02" stroke-width="3"/>`);
  parts.push(`<text x="${x(size) + 10}" y="${y(target) + 4}" fill="#d95f02">target p95</text>`);
}
let legendY = margin.top + 10;
for (const backend of BACKENDS) {
  const points = sorted.filter((run) => run.backend === backend);
  if (points.length === 0) continue;
  const color = COLORS[backend]!;
  for (const [key, dash] of [['p95', ''], ['p50', ' stroke-dasharray="5 4"']] as const) {
    const path = points.map((run, i) => `${i === 0 ? 'M' : 'L'}${x(run.size).toFixed(1)} ${y(run[key]).toFixed(1)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
    for (const run of points) parts.push(`<circle cx="${x(run.size).toFixed(1)}" cy="${y(run[key]).toFixed(1)}" r="3" fill="${color}"/>`);
  }
  parts.push(`<line x1="${width - margin.right + 12}" x2="${width - margin.right + 36}" y1="${legendY}" y2="${legendY}" stroke="${color}" stroke-width="2"/>`);
  parts.push(`<text x="${width - margin.right + 42}" y="${legendY + 4}">${backend}</text>`);
  legendY += 20;
}
parts.push(`<text x="${width - margin.right + 12}" y="${legendY + 10}">solid: p95</text>`);
parts.push(`<text x="${width - margin.right + 12}" y="${legendY + 26}">dashed: p50</text>`);
parts.push('</svg>');
const svgPath = argument('svg', join(here, '../docs/index-latency.svg'));
await writeFile(svgPath, `${parts.join('\n')}\n`);
console.log(`\nwrote ${svgPath}`);
