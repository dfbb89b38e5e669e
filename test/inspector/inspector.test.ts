import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testPrerequisite } from '@memory-agents/core/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { newThread, observeAndSettle, said, threadPaths } from '../learning/learning-support.js';

// The inspector in a real headless browser: Debian's chromium driven by playwright-core (no browser
// download). CI installs chromium (.ci/run); a clone without it skips with one line.

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const haveBrowser = testPrerequisite(CHROMIUM !== undefined, 'inspector browser tests', 'no chromium at /usr/bin/chromium (apt-get install --no-install-recommends chromium)');

/** Screenshots land here (test artifacts; not committed). */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/inspector/', import.meta.url));

// Stored text that would run if any of it reached the page as HTML.
const ATTACKS = [
  `<img src=x onerror="window.__pwned='img'">`,
  `</script><script>window.__pwned='script'</script>`,
  `<svg onload="window.__pwned='svg'"></svg><a href="javascript:window.__pwned='link'">click</a>`,
];
const MARKER = 'Quillfeather';
const THREAD_TITLE = 'The cat and the sofa';

describe.skipIf(!haveBrowser)('the inspector in a browser', () => {
  let server: ServerProcess;
  let api: Client;
  let otherKey: string;
  let browser: Browser;
  let agentId: string;
  let threadId: string;
  let keepThreadId: string;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    server = await startServerProcess();
    api = client(server.url, server.key);
    const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Other', '--data', server.dataDir, '--json'])).stdout);
    otherKey = JSON.parse((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout).key;
    agentId = (await readyAgent(api)).agent_id;
    threadId = (await api.post(`/v1/agents/${agentId}/threads`, { title: THREAD_TITLE })).body.thread_id;
    await observeAndSettle(api, agentId, threadId, [said(`My cat ${MARKER} sleeps on the red sofa every afternoon.`), ...ATTACKS.map((text) => said(text))]);
    const chat = await api.post(threadPaths(agentId, threadId).chat, { turn_id: 'inspect-1', message: `Where does ${MARKER} sleep? ${ATTACKS[0]}` });
    expect(chat.status).toBe(200);
    keepThreadId = await newThread(api, agentId);
    await observeAndSettle(api, agentId, keepThreadId, [said('The office plant is a fiddle-leaf fig named Gustavo.')]);
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  /** A fresh tab (its own session storage) that records anything the page runs or fails to load. */
  async function tab(viewport = { width: 1100, height: 800 }): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    // Nothing the page loads is missing (the favicon included); the API's own refusals are answers.
    page.on('response', (response) => {
      if (response.status() === 404 && !response.url().includes('/inspect/api/')) problems.push(`404: ${response.url()}`);
    });
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url)) problems.push(`request to another origin: ${request.url()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    return { page, problems };
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.goto(`${server.url}/inspect`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
  }

  const pwned = (page: Page) => page.evaluate<string | null>('window.__pwned ?? null');

  it('serves its page with a policy that allows no inline script, no other origin and no framing', async () => {
    const page = await fetch(`${server.url}/inspect`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    // Nothing it ships names another origin (no CDN, no web font). The SVG namespace the charts
    // create their elements in (createElementNS) is a name that is never fetched, as in the icon.
    for (const file of ['/inspect', '/inspect/app.js', '/inspect/inspector.css']) {
      const body = await (await fetch(`${server.url}${file}`)).text();
      expect(body.replaceAll('"http://www.w3.org/2000/svg"', ''), file).not.toMatch(/https?:\/\/|@import|url\(/);
    }
    expect((await fetch(`${server.url}/inspect/../v1/session`)).status).not.toBe(200);
    // The page's door to /v1 answers its own page only; /v1 keeps the spec's rule for browsers.
    const auth = { Authorization: `Bearer ${server.key}` };
    const fromPage = await fetch(`${server.url}/inspect/api/v1/session`, { headers: { ...auth, 'Sec-Fetch-Site': 'same-origin' } });
    expect(fromPage.status).toBe(200);
    for (const site of [undefined, 'cross-site', 'same-site', 'none']) {
      const refused = await fetch(`${server.url}/inspect/api/v1/session`, { headers: { ...auth, ...(site ? { 'Sec-Fetch-Site': site } : {}) } });
      expect(refused.status, String(site)).toBe(403);
      expect(Object.keys((await refused.json()) as object).sort()).toEqual(['code', 'error', 'request_id']);
    }
    expect((await fetch(`${server.url}/v1/session`, { headers: { ...auth, 'Sec-Fetch-Site': 'same-origin' } })).status).toBe(400);
    // The inspector's own errors are the spec's error body (with a request id) and keep its headers.
    const missing = await fetch(`${server.url}/inspect/nothing.js`);
    expect([missing.status, missing.headers.get('content-security-policy')]).toEqual([404, csp]);
    expect(await missing.json()).toEqual({ error: 'The inspector has no such file.', code: 'not_found', request_id: expect.stringMatching(/^req_/) });
    // Its icon is its own file (issue 45): no /favicon.ico 404 on every load.
    const icon = await fetch(`${server.url}/inspect/favicon.svg`);
    expect([icon.status, icon.headers.get('content-type'), icon.headers.get('content-security-policy')]).toEqual([200, "image/svg+xml", csp]);
    const posted = await fetch(`${server.url}/inspect`, { method: 'POST' });
    expect([posted.status, posted.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(Object.keys((await posted.json()) as object).sort()).toEqual(['code', 'error', 'request_id']);
  });

  it('refuses a wrong key and keeps nothing', async () => {
    const { page, problems } = await tab();
    await page.goto(`${server.url}/inspect`);
    await page.getByLabel('API key').fill('sp_not_a_real_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toMatch(/refused/);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('calls its API (through the typed client) at /inspect/api with the key alone: no cookie, no referrer, no cache (issue 40)', async () => {
    const { page, problems } = await tab();
    // A cookie of this origin the page must not send along.
    await page.context().addCookies([{ name: 'session', value: 'not-for-the-api', url: server.url }]);
    const requests: Promise<{ method: string; path: string; headers: Record<string, string> }>[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/inspect/api/')) requests.push(request.allHeaders().then((headers) => ({ method: request.method(), path: url.pathname + url.search, headers })));
    });
    await signIn(page, server.key!);
    await page.goto(`${server.url}/inspect#/agents/${agentId}`);
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await page.waitForLoadState('networkidle');
    const calls = await Promise.all(requests);
    const paths = calls.map((call) => `${call.method} ${call.path}`);
    for (const path of ['GET /inspect/api/v1/session', 'GET /inspect/api/v1/agents', `GET /inspect/api/v1/agents/${agentId}`, `GET /inspect/api/v1/agents/${agentId}/memories?limit=20`, `GET /inspect/api/v1/agents/${agentId}/maintenance?limit=10`]) {
      expect(paths).toContain(path);
    }
    for (const { path, headers } of calls) {
      expect(headers.authorization, path).toBe(`Bearer ${server.key}`);
      expect([headers.cookie, headers.referer], path).toEqual([undefined, undefined]);
      // cache: 'no-store' makes the browser ask past any cache.
      expect([headers['cache-control'], headers.pragma], path).toEqual(['no-cache', 'no-cache']);
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows threads, messages and observations as text: stored markup never runs', async () => {
    const { page, problems } = await tab();
    await signIn(page, server.key!);
    // Readable names are the link text (issue 45): the agent's role, the thread's title.
    await page.getByRole('link', { name: 'assistant' }).click();
    // The agent's memory scope (issue 42): this agent leaves it at the spec's shared default.
    await page.getByRole('link', { name: THREAD_TITLE }).waitFor();
    expect(await page.locator('main').innerText()).toContain('shared (agent): every person reads every memory');
    await page.getByRole('link', { name: THREAD_TITLE }).click();
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    const text = await page.locator('main').innerText();
    for (const attack of ATTACKS) expect(text).toContain(attack);
    expect(await page.locator('main img, main svg, main script, main a[href^="javascript"]').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Observations' }).isVisible()).toBe(true);
    expect(text).toMatch(/committed/);
    expect(await pwned(page)).toBeNull();
    await page.screenshot({ path: `${ARTIFACTS}thread.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('opens an observation\'s receipt from the thread: per turn what was learned, with links to the memories written', async () => {
    const { page, problems } = await tab();
    await signIn(page, server.key!);
    await page.goto(`${server.url}/inspect#/agents/${agentId}/threads/${keepThreadId}`);
    await page.getByRole('heading', { name: 'Observations' }).waitFor();
    await page.getByRole('link', { name: 'Receipt' }).first().click();
    await page.getByRole('heading', { name: 'Receipt', level: 1 }).waitFor();
    const text = await page.locator('main').innerText();
    expect(text).toMatch(/learned/);
    expect(text).toMatch(/committed/);
    // The default writer and the built-in hashed embedder report no model tokens (issue 33).
    expect(text).toMatch(/Model tokens\s+none reported/);
    await page.locator('td a[href*="/memories/"]').first().click();
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    expect(await page.locator('.memory-text').innerText()).toContain('Gustavo');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('opens a memory, shows where it came from and follows the link to its thread', async () => {
    const { page, problems } = await tab();
    await signIn(page, server.key!);
    await page.goto(`${server.url}/inspect#/agents/${agentId}?contains=${MARKER}`);
    await page.getByRole('link', { name: new RegExp(MARKER) }).first().click();
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    expect(await page.locator('.memory-text').innerText()).toContain(MARKER);
    await page.screenshot({ path: `${ARTIFACTS}memory.png`, fullPage: true });
    await page.locator('dd a').first().click();
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    expect(page.url()).toContain(`/threads/${threadId}`);
    expect(await pwned(page)).toBeNull();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('searches as a chat turn would and shows each signal behind the ranking', async () => {
    const { page, problems } = await tab();
    await signIn(page, server.key!);
    await page.getByRole('link', { name: 'assistant' }).click();
    await page.getByLabel('Search as a chat turn would').fill(`Where does ${MARKER} sleep?`);
    await page.getByLabel('Search as a chat turn would').press('Enter');
    await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor();
    const headers = await page.locator('thead th').allInnerTexts();
    expect(headers.slice(0, 3)).toEqual(['Rank', 'Memory', 'Fused']);
    expect(headers.length).toBeGreaterThan(3);
    expect(await page.locator('tbody tr').first().innerText()).toContain(MARKER);
    await page.screenshot({ path: `${ARTIFACTS}search.png`, fullPage: true });
    expect(await pwned(page)).toBeNull();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows the model's view of stored markup as text: nothing in the memory context runs", async () => {
    const { page, problems } = await tab();
    await signIn(page, server.key!);
    await page.goto(`${server.url}/inspect#/agents/${agentId}/context?q=${encodeURIComponent('onerror script svg pwned')}`);
    await page.getByRole('heading', { name: "The model's view", level: 1 }).waitFor();
    const recall = (await api.post(`/v1/agents/${agentId}/recall`, { query: 'onerror script svg pwned' })).body;
    expect(recall.memory_context).toContain('onerror');
    expect(await page.locator('pre.context').textContent()).toBe(recall.memory_context);
    expect(await page.locator('main img, main svg, main script').count()).toBe(0);
    expect(await pwned(page)).toBeNull();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('works with the keyboard alone and fits a phone-width screen', async () => {
    const { page, problems } = await tab({ width: 375, height: 740 });
    await page.goto(`${server.url}/inspect`);
    await page.keyboard.type(server.key!);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    // Tab through the navigation to the first agent, open it, then its first thread.
    for (let i = 0; i < 10 && !(await page.evaluate<string>("document.activeElement?.getAttribute('href') ?? ''")).startsWith('#/agents/'); i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Threads' }).waitFor();
    expect(page.url()).toContain(`#/agents/${agentId}`);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    // Each table row is a card of labelled cells on a phone: an id gets the width, not a narrow
    // column where it would wrap a few characters a line (at most two lines of text here).
    const boxes = await page.evaluate<{ height: number; line: number }[]>(
      `[...document.querySelectorAll('td[data-label="Thread"] a')].map((link) => ({ height: link.getBoundingClientRect().height, line: parseFloat(getComputedStyle(link).lineHeight) }))`,
    );
    expect(boxes.length).toBeGreaterThan(0);
    for (const box of boxes) expect(box.height).toBeLessThanOrEqual(2 * box.line + 1);
    expect(await page.evaluate<string>(`getComputedStyle(document.querySelector('td[data-label="Thread"]'), '::before').content`)).toBe('"Thread"');
    await page.screenshot({ path: `${ARTIFACTS}phone.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows another organization nothing of this one', async () => {
    const { page, problems } = await tab();
    await signIn(page, otherKey);
    expect(await page.locator('main').innerText()).not.toContain(agentId);
    await page.goto(`${server.url}/inspect#/agents/${agentId}/threads/${threadId}`);
    await page.getByRole('heading', { name: 'Could not load this page' }).waitFor();
    expect(await page.locator('main').innerText()).toMatch(/404 agent_not_found/);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('refuses a revoked key on the next action', async () => {
    const created = JSON.parse((await runCli(['keys', 'create', '--org', (await api.get('/v1/session')).body.organization_id, '--data', server.dataDir, '--json'])).stdout);
    const { page, problems } = await tab();
    await signIn(page, created.key);
    await runCli(['keys', 'revoke', '--key-id', created.key_id, '--data', server.dataDir]);
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.locator('#notice').innerText()).toMatch(/refused/);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows the billing ledger', async () => {
    const { page, problems } = await tab();
    await signIn(page, server.key!);
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Ledger' }).waitFor();
    expect(await page.locator('main').innerText()).toContain((await api.get('/v1/session')).body.organization_id);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('erases a thread after a confirmation, and its memories are gone', async () => {
    const { page, problems } = await tab();
    await signIn(page, server.key!);
    await page.goto(`${server.url}/inspect#/agents/${agentId}/threads/${threadId}`);
    await page.getByRole('heading', { name: 'Erase this thread' }).waitFor();
    await page.locator('.erase').last().getByRole('button', { name: 'Erase…' }).click();
    // The first button only asks; the focus moves to the real one.
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe('Erase for good');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Erasure completed' }).waitFor({ timeout: 60_000 });
    await page.goto(`${server.url}/inspect#/agents/${agentId}?contains=${MARKER}`);
    await page.getByRole('heading', { name: 'Memories' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('No memories match.');
    await page.goto(`${server.url}/inspect#/agents/${agentId}`);
    await page.getByRole('heading', { name: 'Memories' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('Gustavo');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the inspector switch', () => {
  it('is off with --no-inspector', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ma-inspector-'));
    const server = await startServerProcess({ dataDir, args: ['--data', dataDir, '--no-inspector'] });
    try {
      const response = await fetch(`${server.url}/inspect`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-security-policy')).toBeNull();
    } finally {
      await server.stop();
      await removeDataDir(server.dataDir);
    }
  });

  it('refuses --inspector with --no-inspector', async () => {
    const result = await runCli(['serve', '--inspector', '--no-inspector', '--port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--inspector or --no-inspector, not both/);
  });
});

