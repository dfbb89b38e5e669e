import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { testPrerequisite } from '@memory-agents/core/testing';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { newThread, observeAndSettle, said } from '../learning/learning-support.js';
import { API_KEY, modelArgs, obedientModel, startScriptedOpenaiServer, type ScriptedOpenaiServer } from '../models/model-support.js';

// The inspector's re-embedding line (issue 39) in a real headless browser, as inspector.test.ts.
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/inspector/', import.meta.url));
const haveBrowser = testPrerequisite(CHROMIUM !== undefined, 'inspector browser tests', 'no chromium at /usr/bin/chromium (apt-get install --no-install-recommends chromium)');

describe.skipIf(!haveBrowser)('the inspector while the memory index is re-embedded', () => {
  let provider: ScriptedOpenaiServer;
  let server: ServerProcess | null = null;
  let browser: Browser;
  let dataDir = '';
  let key = '';

  beforeAll(async () => {
    // The new embedding model never answers a re-embedding batch: the re-embed stays at its start.
    provider = await startScriptedOpenaiServer({
      fallback: {
        chat: { type: 'compute', reply: obedientModel },
        embeddings: { type: 'compute', reply: (body: { input?: unknown }) => (Array.isArray(body.input) && body.input.length > 1 ? { type: 'stall' } : { type: 'embeddings' }) },
      },
    });
    const first = await startServerProcess();
    dataDir = first.dataDir;
    key = first.key!;
    const api = client(first.url, key);
    const agentId = (await readyAgent(api)).agent_id;
    const threadId = await newThread(api, agentId);
    await observeAndSettle(api, agentId, threadId, [said('Ana keeps bees on her roof in Porto.'), said('The office plant is a fig named Gustavo.'), said('Invoices go to billing@acme.test.')]);
    expect(await first.stop()).toBe(0);
    server = await startServerProcess({
      dataDir,
      args: ['--data', dataDir, ...modelArgs(provider, ['--embedding-model', 'scripted-embed', '--embedding-dimensions', '8', '--memory-writer', 'verbatim'])],
      env: { MEMORY_AGENTS_MODEL_API_KEY: API_KEY },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await provider?.close();
    if (dataDir) await removeDataDir(dataDir);
  });

  it('shows "re-embedding: N of M memories" beside every page while it runs', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.goto(`${server!.url}/inspect`);
    // Not before signing in: the sign-in page shows nothing of the server.
    expect(await page.locator('#reembedding').isVisible()).toBe(false);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    const line = page.locator('#reembedding');
    await line.waitFor({ state: 'visible' });
    expect(await line.textContent()).toMatch(/^re-embedding: 0 of 3 memories \(hashed-ngrams-v1:384 → .*scripted-embed.*\)/);
    expect(await line.getAttribute('role')).toBe('status');
    // For a person to look at (test-artifacts/ is not committed): wide and phone-narrow.
    await page.screenshot({ path: `${ARTIFACTS}reembedding-wide.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 800 });
    await page.screenshot({ path: `${ARTIFACTS}reembedding-narrow.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
