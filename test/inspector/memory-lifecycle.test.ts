import { mkdir } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { ARTIFACTS, CHROMIUM, fact, haveBrowser, signedInPage } from '../support/inspector-browser.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { observeAndSettle, said } from '../learning/learning-support.js';

// The inspector edits memories (issues 42 and 45), driven in Debian's chromium as a person would and
// compared with what the API then answers: edit the text (a new memory, the old one kept as
// history), pin and unpin, forget with a reason and restore, the agent's memory decay, and the
// API's own sentence when it refuses (409, 422).

describe.skipIf(!haveBrowser)('the inspector edits, pins, forgets and restores memories', () => {
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
    await observeAndSettle(api, agentId, threadId, [said('The guest in room 412 keeps a parrot named Captain Mango.'), said('I am allergic to peanuts and shellfish.'), said('My favourite breakfast is porridge with blueberries.')]);
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  const memories = () => `/v1/agents/${agentId}/memories`;
  const find = async (words: string) => (await api.get(`${memories()}?text_contains=${encodeURIComponent(words)}`)).body.memories;

  async function signedIn(hash: string): Promise<{ page: Page; problems: string[] }> {
    const signed = await signedInPage(browser, server, hash);
    signed.page.on('dialog', (dialog) => {
      signed.problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    return signed;
  }
  const memoryPage = (memoryId: string) => `/agents/${agentId}/memories/${memoryId}`;

  it('edits the text: the page goes to the new memory the API answered, and links the old one, kept as history', async () => {
    const [old] = await find('Captain Mango');
    const { page, problems } = await signedIn(memoryPage(old.memory_id));
    await page.getByRole('heading', { name: 'Edit the text' }).waitFor();
    expect(await page.getByLabel('Text', { exact: true }).inputValue()).toBe(old.text);
    const text = 'The guest in room 414 keeps a parrot named Captain Mango.';
    await page.getByLabel('Text', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Save the new text' }).click();
    await page.waitForURL((url) => url.hash.includes('/memories/') && !url.hash.includes(old.memory_id));
    await page.getByText('Saved as a new memory. The old text is kept as history').waitFor();

    // The API: one current memory, the edit, naming the old one; the old one is history replaced by it.
    const [current] = await find('Captain Mango');
    expect(current.text).toBe(text);
    expect(current.edited.from_memory_id).toBe(old.memory_id);
    expect(page.url()).toContain(current.memory_id);
    expect((await api.get(`${memories()}/${old.memory_id}`)).body.superseded_by).toBe(current.memory_id);
    await page.locator('blockquote.memory-text', { hasText: text }).waitFor();
    expect(await fact(page, 'Edited from')).toContain('kept as history');
    expect(await page.locator('.timeline li').evaluateAll((items) => items.map((item) => item.getAttribute('data-kind')))).toEqual(['learned', 'edited']);
    await page.screenshot({ path: `${ARTIFACTS}memory-edited.png`, fullPage: true });

    // The notice's link opens the old memory: history, which takes no edit.
    await page.locator('#notice').getByRole('link', { name: `"${old.text}"` }).click();
    await page.waitForURL((url) => url.hash.includes(old.memory_id));
    await page.locator('blockquote.memory-text', { hasText: old.text }).waitFor();
    expect(await fact(page, 'Superseded by')).toBe('the memory that replaced it');
    expect(await page.getByRole('heading', { name: 'Edit the text' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("refuses a text of spaces with the API's own sentence (422), and changes nothing", async () => {
    const [memory] = await find('porridge');
    const refused = await api.patch(`${memories()}/${memory.memory_id}`, { text: '   ' });
    expect(refused.status).toBe(422);
    const { page, problems } = await signedIn(memoryPage(memory.memory_id));
    await page.getByLabel('Text', { exact: true }).fill('   ');
    await page.getByRole('button', { name: 'Save the new text' }).click();
    const notice = page.locator('.notice.error');
    await notice.waitFor();
    expect(await notice.innerText()).toBe(`${refused.body.error} (422 ${refused.body.code})`);
    expect(await find('porridge')).toEqual([memory]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('pins and unpins: a badge on the page and in the memory list, as the API has it', async () => {
    const [memory] = await find('allergic');
    expect(memory.pinned).toBe(false);
    const { page, problems } = await signedIn(memoryPage(memory.memory_id));
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    await page.getByRole('button', { name: 'Unpin' }).waitFor();
    expect((await api.get(`${memories()}/${memory.memory_id}`)).body.pinned).toBe(true);
    expect(await page.locator('h1 .badge.pinned').innerText()).toBe('pinned');
    expect(await page.locator('#notice').innerText()).toBe('The memory is pinned.');
    await page.screenshot({ path: `${ARTIFACTS}memory-pinned.png`, fullPage: true });
    // The agent's memory list: the badge on this memory's row only, as the API's pinned says.
    await page.goto(`${server.url}/inspect#/agents/${agentId}`);
    await page.getByRole('heading', { name: /^Memories/ }).waitFor();
    const listed = (await api.get(`${memories()}?limit=20`)).body.memories;
    const rows = page.locator('td[data-label="Memory"]');
    expect(await rows.count()).toBe(listed.length);
    for (let i = 0; i < listed.length; i++) expect(await rows.nth(i).locator('.badge.pinned').count()).toBe(listed[i].pinned ? 1 : 0);
    expect(listed.filter((m: any) => m.pinned).map((m: any) => m.memory_id)).toEqual([memory.memory_id]);
    await page.screenshot({ path: `${ARTIFACTS}memory-list-pinned.png`, fullPage: true });
    await page.goto(`${server.url}/inspect#${memoryPage(memory.memory_id)}`);
    await page.getByRole('button', { name: 'Unpin' }).click();
    await page.getByRole('button', { name: 'Pin', exact: true }).waitFor();
    expect((await api.get(`${memories()}/${memory.memory_id}`)).body.pinned).toBe(false);
    expect(await page.locator('h1 .badge').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('forgets with a reason after a confirmation, shows the reason and restore_until, and restores', async () => {
    const [memory] = await find('porridge');
    const { page, problems } = await signedIn(memoryPage(memory.memory_id));
    await page.getByRole('heading', { name: 'Forget' }).waitFor();
    // No reason: the field is asked for, nothing is sent.
    await page.getByRole('button', { name: 'Forget…' }).click();
    expect(await page.evaluate<string | null>('document.activeElement?.id ?? null')).toBe('forget-reason');
    await page.getByLabel('Reason').fill('The guest asked us to forget it.');
    await page.getByRole('button', { name: 'Forget…' }).click();
    expect(await page.getByRole('alert').innerText()).toContain('after that it is erased for good');
    expect((await api.get(`${memories()}/${memory.memory_id}`)).body.forgotten).toBeNull();
    await page.getByRole('button', { name: 'Forget it' }).click();
    const section = page.getByRole('region', { name: 'Forgotten' });
    await section.waitFor();

    const forgotten = (await api.get(`${memories()}/${memory.memory_id}?include_expired=true`)).body.forgotten;
    expect(forgotten.reason).toBe('The guest asked us to forget it.');
    expect(await find('porridge')).toEqual([]);
    const until = await page.evaluate<string, string>((iso) => new Date(iso).toLocaleString(), forgotten.restore_until);
    expect(await section.locator('.forgotten-reason').innerText()).toBe(forgotten.reason);
    expect(await section.innerText()).toContain(`It can be restored until ${until}`);
    expect(await page.locator('#notice').innerText()).toContain(`It can be restored until ${until}`);
    expect(await page.locator('h1 .badge.forgotten').innerText()).toBe('forgotten');
    // A forgotten memory takes no change: no pin, edit, expiry or forget forms.
    for (const heading of ['Pin', 'Edit the text', 'Expiry', 'Forget']) expect(await page.getByRole('heading', { name: heading, exact: true }).count()).toBe(0);
    await page.screenshot({ path: `${ARTIFACTS}memory-forgotten.png`, fullPage: true });

    await section.getByRole('button', { name: 'Restore' }).click();
    await section.waitFor({ state: 'detached' });
    expect((await api.get(`${memories()}/${memory.memory_id}`)).body.forgotten).toBeNull();
    expect((await find('porridge')).map((m: any) => m.memory_id)).toEqual([memory.memory_id]);
    expect(await page.locator('#notice').innerText()).toContain('The memory was restored');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("says the API's 409 sentence when the memory changed under the page (forgotten elsewhere), and restore's 409 too", async () => {
    const [memory] = await find('porridge');
    const { page, problems } = await signedIn(memoryPage(memory.memory_id));
    await page.getByRole('button', { name: 'Pin', exact: true }).waitFor();
    // Forgotten by somebody else while the page is open.
    expect((await api.post(`${memories()}/${memory.memory_id}/forget`, { reason: 'duplicate' })).status).toBe(200);
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    const notice = page.locator('.notice.error');
    await notice.waitFor();
    const refused = await api.patch(`${memories()}/${memory.memory_id}`, { pinned: true });
    expect(refused.status).toBe(409);
    expect(await notice.innerText()).toBe(`${refused.body.error} (409 ${refused.body.code})`);
    // Restored elsewhere; the page (reloaded as forgotten) then restores again: 409, the API's sentence.
    await page.reload();
    const section = page.getByRole('region', { name: 'Forgotten' });
    await section.waitFor();
    expect((await api.post(`${memories()}/${memory.memory_id}/restore`)).status).toBe(200);
    await section.getByRole('button', { name: 'Restore' }).click();
    await notice.waitFor();
    const again = await api.post(`${memories()}/${memory.memory_id}/restore`);
    expect(again.status).toBe(409);
    await page.getByText(`${again.body.error} (409 ${again.body.code})`).waitFor();
    expect((await api.get(`${memories()}/${memory.memory_id}`)).body.pinned).toBe(false);
    await page.screenshot({ path: `${ARTIFACTS}memory-conflict.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('offers no Restore once restore_until has passed in the browser, and says it is erased at the next sweep', async () => {
    const [memory] = await find('allergic');
    const forgotten = (await api.post(`${memories()}/${memory.memory_id}/forget`, { reason: 'Wrong guest.' })).body.forgotten;
    const { page, problems } = await signedIn('/');
    // The browser's clock a minute past the window (the server's is untouched: the page alone decides what to offer).
    await page.clock.setFixedTime(new Date(Date.parse(forgotten.restore_until) + 60_000));
    await page.goto(`${server.url}/inspect#${memoryPage(memory.memory_id)}`);
    const section = page.getByRole('region', { name: 'Forgotten' });
    await section.waitFor();
    const until = await page.evaluate<string, string>((iso) => new Date(iso).toLocaleString(), forgotten.restore_until);
    expect(await section.innerText()).toContain(`The restore window ended ${until}: it is erased at the next sweep.`);
    expect(await section.getByRole('button', { name: 'Restore' }).count()).toBe(0);
    expect((await api.post(`${memories()}/${memory.memory_id}/restore`)).status).toBe(200);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('fits the memory controls on a phone-width screen (nothing wider than the screen)', async () => {
    const [memory] = await find('allergic');
    const { page, problems } = await signedIn(memoryPage(memory.memory_id));
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('heading', { name: 'Forget' }).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
    const box = await page.getByLabel('Text', { exact: true }).boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: `${ARTIFACTS}memory-controls-phone.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("sets the agent's memory decay half-lives (empty = off), as the API then has them, and shows the API's 422", async () => {
    const { page, problems } = await signedIn(`/agents/${agentId}`);
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    expect(await fact(page, 'Memory decay')).toBe('off');
    await page.getByLabel('Memories from turns').fill('30');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await expect.poll(() => fact(page, 'Memory decay')).toBe('turn memories lose half their score every 30 days');
    const config = (await api.get(`/v1/agents/${agentId}`)).body.agent_config;
    expect(config.memory_decay).toEqual({ turn_half_life_days: 30 });
    // The rest of the config is kept.
    expect(config).toMatchObject({ role: 'Concierge', objective: 'remember guests' });
    expect(await page.getByLabel('Memories from turns').inputValue()).toBe('30');
    expect(await page.getByLabel('Memories from documents').inputValue()).toBe('');
    await page.screenshot({ path: `${ARTIFACTS}settings-decay.png`, fullPage: true });

    // Out of range: the API's own sentence, nothing changed.
    await page.getByLabel('Memories from documents').fill('0');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const notice = page.locator('.notice.error');
    await notice.waitFor();
    const refused = await api.patch(`/v1/agents/${agentId}`, { agent_config: { ...config, memory_decay: { turn_half_life_days: 30, document_half_life_days: 0 } } });
    expect(refused.status).toBe(422);
    expect(await notice.innerText()).toBe(`${refused.body.error} (422 ${refused.body.code})`);
    expect((await api.get(`/v1/agents/${agentId}`)).body.agent_config.memory_decay).toEqual({ turn_half_life_days: 30 });

    // Both empty: off.
    await page.getByLabel('Memories from documents').fill('');
    await page.getByLabel('Memories from turns').fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await expect.poll(() => fact(page, 'Memory decay')).toBe('off');
    const off = (await api.get(`/v1/agents/${agentId}`)).body.agent_config.memory_decay;
    expect(off === undefined || Object.keys(off).length === 0).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
