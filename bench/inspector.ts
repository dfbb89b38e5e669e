/**
 * The inspector's page weight and time to first render on the embedded default.
 *
 *   npm run build && npx tsx bench/inspector.ts [--memories 10000] [--runs 7]
 *
 * Fills a fresh data dir through the public API with `--memories` turns (the default writer learns
 * one memory per short turn) in jobs of 100, then drives Debian's chromium (playwright-core) and
 * reports, as medians over `--runs` fresh tabs: the sign-in page (navigation to its form), and an
 * agent's page (navigation to its memory table: the agent, its threads and the newest 20 memories
 * through the inspector's API), and the agent's "Over time" page (navigation to its chart of every
 * memory's learned_at, read 100 at a time). As a baseline from the same minutes: the time of the
 * agent page's API reads by Node's fetch, so the page's own cost is the difference. Page weight: the bytes of the
 * page, script, stylesheet and icon as served, and gzip-compressed.
 */
import { existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { argument } from './support/args.js';
import { BUILT_CLI, conversationalTurn, startBuiltServer, stopBuiltServer } from './support/built-server.js';

const memories = Number(argument('memories', '10000'));
const runs = Number(argument('runs', '7'));
const executablePath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
if (!executablePath) throw new Error('no chromium at /usr/bin/chromium (apt-get install --no-install-recommends chromium)');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const server = await startBuiltServer(BUILT_CLI, { dataDirPrefix: 'ma-bench-inspector-' });
try {
  const headers = { Authorization: `Bearer ${server.key}`, 'Content-Type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown): Promise<any> => {
    const response = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    // The default request windows (60 observes a minute) pace the fill: wait as the server says.
    if (response.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)));
      return call(method, path, body);
    }
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<any>;
  };
  const agent = await call('POST', '/v1/agents', { agent_config: { role: 'Inspector bench', objective: 'Hold memories to inspect.' } });
  while ((await call('GET', `/v1/agents/${agent.agent_id}`)).status !== 'ready') await new Promise((resolve) => setTimeout(resolve, 50));
  const thread = await call('POST', `/v1/agents/${agent.agent_id}/threads`, {});
  const base = `/v1/agents/${agent.agent_id}/threads/${thread.thread_id}`;
  const started = performance.now();
  for (let sent = 0; sent < memories; sent += 100) {
    const count = Math.min(100, memories - sent);
    const observations = Array.from({ length: count }, (_, i) => ({ content: [{ type: 'text', text: conversationalTurn(`Note ${sent + i}: `, sent + i + 1, 160) }] }));
    const job = await call('POST', `${base}/observe`, { observations });
    while (!['committed', 'failed', 'cancelled'].includes((await call('GET', `${base}/observe/${job.observation_id}/status`)).status)) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const learned = (await call('GET', `/v1/agents/${agent.agent_id}/memories?limit=1`)).memories.length;
  console.log(`filled ${memories} turns in ${((performance.now() - started) / 1000).toFixed(1)} s (memories listed: ${learned > 0 ? 'yes' : 'NO'})`);

  // The first load: the page, its script, stylesheet and icon (issue 45).
  const files = ['/inspect', '/inspect/app.js', '/inspect/inspector.css', '/inspect/favicon.svg'];
  let raw = 0;
  let gzip = 0;
  for (const file of files) {
    const bytes = Buffer.from(await (await fetch(`${server.url}${file}`)).arrayBuffer());
    raw += bytes.length;
    gzip += gzipSync(bytes).length;
    console.log(`  ${file}: ${bytes.length} bytes (${gzipSync(bytes).length} gzip)`);
  }
  console.log(`page weight: ${raw} bytes, ${gzip} gzip (${files.length} files, nothing from another origin)`);

  const browser = await chromium.launch({ executablePath, headless: true });
  const signIn: number[] = [];
  const agentPage: number[] = [];
  const apiOnly: number[] = [];
  const chartPage: number[] = [];
  for (let run = 0; run <= runs; run++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    let t = performance.now();
    await page.goto(`${server.url}/inspect`);
    await page.getByLabel('API key').waitFor();
    const signInMs = performance.now() - t;
    await page.getByLabel('API key').fill(server.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    t = performance.now();
    await page.goto(`${server.url}/inspect#/agents/${agent.agent_id}`);
    await page.reload();
    await page.locator('a[href*="/memories/"]').first().waitFor();
    const agentMs = performance.now() - t;
    // The "Over time" page: every memory's learned_at (pages of 100), charted (issue 45).
    t = performance.now();
    await page.goto(`${server.url}/inspect#/agents/${agent.agent_id}/charts`);
    await page.locator('svg.chart').waitFor({ timeout: 120_000 });
    const chartMs = performance.now() - t;
    await context.close();
    t = performance.now();
    await Promise.all([call('GET', `/v1/agents/${agent.agent_id}`), call('GET', `/v1/agents/${agent.agent_id}/memories?limit=20`)]);
    const apiMs = performance.now() - t;
    if (run === 0) continue; // warm-up
    signIn.push(signInMs);
    agentPage.push(agentMs);
    apiOnly.push(apiMs);
    chartPage.push(chartMs);
  }
  await browser.close();
  console.log(`sign-in page, navigation to form: median ${median(signIn).toFixed(0)} ms`);
  console.log(`agent page with ${memories} memories, navigation to memory table: median ${median(agentPage).toFixed(0)} ms`);
  console.log(`baseline, the same API reads by fetch: median ${median(apiOnly).toFixed(0)} ms`);
  console.log(`"Over time" page, ${memories} memories charted, navigation to its chart: median ${median(chartPage).toFixed(0)} ms`);
} finally {
  await stopBuiltServer(server);
}
