import { mkdir } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { ARTIFACTS, CHROMIUM, fact, haveBrowser, signedInPage } from '../support/inspector-browser.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { observeAndSettle } from '../learning/learning-support.js';

// The inspector's review queue (issue 43), driven in Debian's chromium as a person would and compared
// with what the API then answers: the review mode set in the settings, the queue with a hidden
// character shown as a marker (never rendered), approve, decline with a reason, edit, undo.

const CONFIG = { role: 'Concierge', objective: 'remember guests' };
const say = (text: string) => ({ speaker: 'alice', content: [{ type: 'text', text }] });

describe.skipIf(!haveBrowser)('the inspector shows the review queue and decides on it', () => {
  let server: ServerProcess;
  let api: Client;
  let browser: Browser;
  let agentId: string;
  let threadId: string;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    server = await startServerProcess();
    api = client(server.url, server.key);
    agentId = (await readyAgent(api, CONFIG)).agent_id;
    threadId = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'Guests' })).body.thread_id;
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  const signedIn = (hash: string) => signedInPage(browser, server, hash);
  const queue = async (state = 'pending') => (await api.get(`/v1/agents/${agentId}/review?state=${state}`)).body.items as { state: string; memory: { memory_id: string; text: string }; decisions: { action: string; reason: string | null }[] }[];

  it('sets the review mode in the settings; the queue shows a hidden character as a marker; approve, decline, edit and undo reach the API', async () => {
    const { page, problems } = await signedIn(`/agents/${agentId}`);
    await page.getByLabel('Review before use').selectOption('all');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    expect((await api.get(`/v1/agents/${agentId}`)).body.agent_config.review_mode).toBe('all');
    expect(await fact(page, 'Review mode')).toBe('all');

    await observeAndSettle(api, agentId, threadId, [say('The door code is 44\u202E17 since Monday.'), say('Remember that I hate olives on pizza.'), say('My sister Ingrid lives in Tromsø.')]);
    await page.reload();
    await page.getByRole('link', { name: 'Review queue: 3 waiting for approval →' }).click();
    await page.getByRole('heading', { name: 'Review queue', level: 1 }).waitFor();
    const door = page.locator('tr', { hasText: 'The door code is' });
    expect(await door.locator('td').first().innerText()).toContain('The door code is 44⟦U+202E right-to-left override⟧17 since Monday.');
    expect(await door.locator('mark.hidden-char').count()).toBe(1);
    await page.screenshot({ path: `${ARTIFACTS}review-queue.png`, fullPage: true });
    // On a phone each row is a card of labelled cells; the marker stays visible.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await door.locator('mark.hidden-char').isVisible()).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}review-queue-narrow.png`, fullPage: true });
    await page.setViewportSize({ width: 1100, height: 900 });

    await page.locator('tr', { hasText: 'Ingrid' }).getByRole('button', { name: 'Approve' }).click();
    await page.getByText(/^Approve: mem_\S+ is now approved\./).waitFor();
    expect((await api.get(`/v1/agents/${agentId}/memories`)).body.memories.map((memory: { text: string }) => memory.text)).toEqual(['My sister Ingrid lives in Tromsø.']);

    const olives = page.locator('tr', { hasText: 'olives' });
    await olives.getByLabel('Reason to decline').fill('a joke, not a preference');
    await olives.getByRole('button', { name: 'Decline' }).click();
    await page.getByText(/^Decline: mem_\S+ is now declined\./).waitFor();
    expect((await queue('declined'))[0]).toMatchObject({ memory: { text: 'Remember that I hate olives on pizza.' }, decisions: [{ action: 'decline', reason: 'a joke, not a preference' }] });

    const doorRow = page.locator('tr', { hasText: 'The door code is' });
    await doorRow.getByText('Edit the text').click();
    await doorRow.getByLabel('New text').fill('The door code is 4417 since Monday.');
    await doorRow.getByRole('button', { name: 'Save text' }).click();
    await page.getByText(/^Save text: mem_\S+ is now pending\./).waitFor();
    expect((await queue()).map((item) => item.memory.text)).toEqual(['The door code is 4417 since Monday.']);
    await page.locator('tr', { hasText: 'The door code is 4417' }).waitFor();
    expect(await page.locator('mark.hidden-char').count()).toBe(0);

    // A memory's own page says where it stands and leads to the queue.
    const [pending] = await queue();
    await page.goto(`${server.url}/inspect#/agents/${agentId}/memories/${pending!.memory.memory_id}`);
    expect(await fact(page, 'Review')).toBe('pending (hidden from lists, search and chat until approved) review queue →');
    await page.getByRole('link', { name: 'review queue →' }).click();
    await page.getByRole('heading', { name: 'Review queue', level: 1 }).waitFor();

    await page.getByRole('link', { name: 'Declined' }).click();
    await page.locator('tr', { hasText: 'olives' }).getByRole('button', { name: 'Undo' }).click();
    await page.getByText(/^Undo: mem_\S+ is now pending\./).waitFor();
    expect((await queue()).map((item) => item.memory.text).sort()).toEqual(['Remember that I hate olives on pizza.', 'The door code is 4417 since Monday.']);
    await page.screenshot({ path: `${ARTIFACTS}review-declined-tab.png`, fullPage: true });
    // This server has no language model: reflection is refused with the server's sentence.
    await page.getByRole('button', { name: 'Ask the model for proposals' }).click();
    await page.getByText(/Reflection needs a language model/).waitFor();
    // Re-learning under the writer that learned them: every turn unchanged.
    await page.getByRole('button', { name: 'Re-learn every thread' }).click();
    await page.getByText(/read 3 turns: 3 unchanged, 0 memories proposed\./).waitFor();
    expect(problems).toEqual([]);
  });
});
