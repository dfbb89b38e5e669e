import { mkdir } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { ARTIFACTS, CHROMIUM, fact, haveBrowser, signedInPage } from '../support/inspector-browser.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { observeAndSettle, said } from '../learning/learning-support.js';

// The inspector's maintenance pages (issues 43 and 44), driven in Debian's chromium as a person would
// and compared with what the API then answers: a dry run planned from the agent page, its diff
// (memory before -> after, category), apply, undo, and a memory's category on its page.

describe.skipIf(!haveBrowser)('the inspector plans, shows, applies and undoes maintenance runs', () => {
  let server: ServerProcess;
  let api: Client;
  let browser: Browser;
  let agentId: string;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    server = await startServerProcess();
    api = client(server.url, server.key);
    agentId = (await readyAgent(api, { role: 'Concierge', objective: 'remember guests' })).agent_id;
    const threadId = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'Guests' })).body.thread_id;
    // Learned before the agent had a policy: no category.
    await observeAndSettle(api, agentId, threadId, [said('I play the cello on Sundays.'), said('My sister Ingrid lives in Tromsø.')]);
    const policy = { categories: [{ name: 'hobbies', keywords: ['cello'] }] };
    expect((await api.patch(`/v1/agents/${agentId}`, { agent_config: { role: 'Concierge', objective: 'remember guests', extraction_policy: policy } })).status).toBe(200);
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  const signedIn = (hash: string) => signedInPage(browser, server, hash);
  const runs = async () => (await api.get(`/v1/agents/${agentId}/maintenance`)).body.runs;

  it('a dry run from the agent page shows its diff; apply and undo change what the API answers', async () => {
    const { page, problems } = await signedIn(`/agents/${agentId}`);
    await page.getByRole('heading', { name: /^Maintenance/ }).waitFor();
    await page.getByLabel('Tidy').selectOption('reapply_policy');
    await page.getByRole('button', { name: 'Dry run' }).click();
    await page.waitForURL((url) => url.hash.includes('/maintenance/mnt_'));
    await page.getByRole('heading', { name: 'Maintenance: reapply policy (dry run)' }).waitFor();
    const [run] = await runs();
    expect(run).toMatchObject({ kind: 'reapply_policy', status: 'dry_run' });
    expect(page.url()).toContain(run.run_id);
    const row = page.locator('tr', { hasText: 'I play the cello on Sundays.' });
    expect(await row.locator('td').allInnerTexts()).toEqual(['re-categorised', 'I play the cello on Sundays.', 'same text', 'none → hobbies', expect.stringContaining('category hobbies')]);
    expect(await fact(page, 'Guard')).toMatch(/^allows: takes 0\.0% of 2 current memories/);
    await page.screenshot({ path: `${ARTIFACTS}maintenance-dry-run.png`, fullPage: true });

    await page.getByRole('button', { name: 'Apply these changes' }).click();
    await page.getByText('Applied: 1 recategorised.').waitFor();
    await page.getByRole('heading', { name: 'Maintenance: reapply policy (applied)' }).waitFor();
    expect((await api.get(`/v1/agents/${agentId}/maintenance/${run.run_id}`)).body).toMatchObject({ status: 'applied', receipt: { recategorised: 1 } });
    const [cello] = (await api.get(`/v1/agents/${agentId}/memories?category=hobbies`)).body.memories;
    expect(cello.text).toBe('I play the cello on Sundays.');

    // The memory's own page shows its category.
    await page.getByRole('link', { name: 'I play the cello on Sundays.' }).click();
    await page.waitForURL((url) => url.hash.includes(`/memories/${cello.memory_id}`));
    await page.locator('dl.facts').waitFor();
    expect(await fact(page, 'Category')).toBe('hobbies');

    await page.goBack();
    await page.getByRole('button', { name: 'Undo this run' }).click();
    await page.getByText('Undone: every change of the run was reversed.').waitFor();
    expect((await api.get(`/v1/agents/${agentId}/maintenance/${run.run_id}`)).body.status).toBe('undone');
    expect((await api.get(`/v1/agents/${agentId}/memories?category=hobbies`)).body.memories).toEqual([]);
    await page.screenshot({ path: `${ARTIFACTS}maintenance-undone.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows the API's sentence when applying is refused, and lists runs on the agent page", async () => {
    const planned = (await api.post(`/v1/agents/${agentId}/maintenance`, { kind: 'reapply_policy' })).body;
    // The policy changes after the dry run: applying it is 409.
    await api.patch(`/v1/agents/${agentId}`, { agent_config: { role: 'Concierge', objective: 'remember guests', extraction_policy: { categories: [{ name: 'music', keywords: ['cello'] }] } } });
    const { page, problems } = await signedIn(`/agents/${agentId}/maintenance/${planned.run_id}`);
    await page.getByRole('button', { name: 'Apply these changes' }).click();
    const notice = page.locator('.notice.error');
    await notice.waitFor();
    expect(await notice.innerText()).toMatch(/planned under version 1; plan a new run\. \(409 conflict\)$/);
    await page.goto(`${server.url}/inspect#/agents/${agentId}`);
    await page.getByRole('link', { name: planned.run_id }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
