import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildPdf, testPrerequisite } from '@memory-agents/core/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { observeAndSettle, pollStatus, said } from '../learning/learning-support.js';
import { postForm } from '../documents/document-support.js';

// The rest of the inspector as a workbench (issue 45), driven in Debian's chromium as a person would
// and compared with what the API answers: a document memory's "page N" opens the document at that
// page, a memory's timeline, the try-out chat pane beside the model's view, the charts of memories
// and credits over time, and a person's page that erases them.

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const haveBrowser = testPrerequisite(CHROMIUM !== undefined, 'inspector browser tests', 'no chromium at /usr/bin/chromium (apt-get install --no-install-recommends chromium)');

/** Screenshots land here (test artifacts; not committed). */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/inspector/', import.meta.url));

const at = (text: string, timestamp: string) => ({ content: [{ type: 'text', text }], timestamp });

/** Per UTC day, as the inspector's charts count (a test of a run across midnight sees two days). */
function perDay(moments: { at: string; value: number }[]): Map<string, number> {
  const days = new Map<string, number>();
  for (const moment of moments) days.set(moment.at.slice(0, 10), Math.round(((days.get(moment.at.slice(0, 10)) ?? 0) + moment.value) * 1e6) / 1e6);
  return days;
}

describe.skipIf(!haveBrowser)('the inspector as a workbench: documents, timelines, chat, charts, people', () => {
  let server: ServerProcess;
  let api: Client;
  let key: string;
  let browser: Browser;
  let agentId: string;
  let phoneThread: string;
  let docThread: string;
  let docObservation: string;
  let aliceThread: string;
  const alice = { 'X-SP-End-User': 'alice@example.com' };
  // Pages long enough that each starts a piece of its own (pieces are at least 200 characters).
  const PAGES = [
    ['The spa on the first floor opens at eight in the morning.', 'Towels for the spa are at the front desk.', 'The sauna is closed on Mondays for cleaning.', 'Massages are booked at the spa desk a day ahead.', 'Robes are in every room.'],
    ['The rooftop pool is heated all year round.', 'Children may swim in the pool until six.', 'Lifeguards watch the pool from ten to seven.', 'Glass is not allowed anywhere near the pool.', 'Sunbeds cannot be reserved.'],
    ['Late checkout until two costs thirty euros.', 'The shuttle to the airport leaves every hour.', 'Luggage can be stored at the concierge desk.', 'Taxis wait at the main entrance day and night.', 'Parking costs twenty euros.'],
  ];

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    server = await startServerProcess();
    // An organization with billing on, so the ledger has charges to chart.
    const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Hotel', '--credits', '1000', '--data', server.dataDir, '--json'])).stdout);
    key = JSON.parse((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout).key;
    api = client(server.url, key);
    agentId = (await readyAgent(api, { role: 'Concierge', objective: 'remember guests' })).agent_id;
    phoneThread = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'Phone numbers' })).body.thread_id;
    // A fact and its change (history), then the same words said twice (a merge).
    await observeAndSettle(api, agentId, phoneThread, [at('My phone number is 555-0100.', '2024-01-10T09:00:00.000Z'), at('My new phone number is 555-0199.', '2024-04-02T18:30:00.000Z')]);
    await observeAndSettle(api, agentId, phoneThread, [said('I am allergic to peanuts and shellfish.'), said('The guest in room 412 keeps a parrot named Captain Mango.'), said('I am allergic to peanuts and shellfish.')]);
    docThread = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'House rules' })).body.thread_id;
    const pdf = buildPdf(PAGES.map((text) => ({ text })));
    const uploaded = await postForm(server.url, key, `/v1/agents/${agentId}/threads/${docThread}/observe-file`, { data: pdf, filename: 'house-rules.pdf', type: 'application/pdf' }, { max_chars: '200', overlap_chars: '0' });
    expect(uploaded.status, uploaded.text).toBe(202);
    docObservation = uploaded.body.observation_id;
    await pollStatus(api, `/v1/agents/${agentId}/threads/${docThread}/observe/${docObservation}/status`);
    aliceThread = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'Alice plans a trip' }, { headers: alice })).body.thread_id;
    await observeAndSettle(api, agentId, aliceThread, [said('I am flying to Lisbon on Friday.'), said('My seat is 14C.')], alice);
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  async function signedIn(hash = ''): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // A refusal of the API (a 404 of a memory that is gone) is an answer the page handles; anything else is a problem.
    page.on('console', (message) => {
      if (message.type() === 'error' && !(message.text().startsWith('Failed to load resource') && message.location().url.includes('/inspect/api/'))) problems.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() === 404 && !response.url().includes('/inspect/api/')) problems.push(`404: ${response.url()}`);
    });
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(`${server.url}/inspect`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Agents/, level: 1 }).waitFor();
    if (hash) await page.goto(`${server.url}/inspect#${hash}`);
    return { page, problems };
  }

  const agentPath = () => `/v1/agents/${agentId}`;

  it("opens a document memory's page N at that page: the converted text of that page's pieces, as the turns API has them", async () => {
    const turns = (await api.get(`${agentPath()}/threads/${docThread}/turns?observation_id=${docObservation}&limit=200`)).body.turns;
    expect(new Set(turns.map((turn: any) => turn.document.page))).toEqual(new Set([1, 2, 3]));
    const sourceId = turns[0].document.source_id;
    // A memory learned from a piece that starts on page 2.
    const memory = (await api.get(`${agentPath()}/memories?source_id=${sourceId}&limit=100`)).body.memories.find((m: any) => m.source.page === 2);
    expect(memory.source).toMatchObject({ kind: 'document', page: 2, filename: 'house-rules.pdf' });
    const onPage = (n: number) => turns.filter((turn: any) => turn.document.page <= n && n <= (turn.document.page_end ?? turn.document.page)).map((turn: any) => turn.text);

    const { page, problems } = await signedIn(`/agents/${agentId}/memories/${memory.memory_id}`);
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    await page.locator('dl.facts').getByRole('link', { name: `house-rules.pdf, page 2, piece ${memory.source.piece + 1}` }).click();
    await page.getByRole('heading', { name: 'house-rules.pdf, page 2', level: 1 }).waitFor();
    expect(await page.locator('li.piece > p').allInnerTexts()).toEqual(onPage(2));
    expect(onPage(2).join(' ')).toContain('Lifeguards watch the pool');
    expect(onPage(2).join(' ')).not.toContain('Parking costs');
    // The memory's piece is marked and has the focus; the memory is listed beside it.
    expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('data-piece') ?? null")).toBe(String(memory.source.piece));
    expect(await page.locator('li.piece.target .turn-memories a').allTextContents()).toContain(memory.text);
    await page.screenshot({ path: `${ARTIFACTS}document-page.png`, fullPage: true });
    // Another page, from the page list.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: '3', exact: true }).click();
    await page.getByRole('heading', { name: 'house-rules.pdf, page 3', level: 1 }).waitFor();
    expect(await page.locator('li.piece > p').allInnerTexts()).toEqual(onPage(3));
    // A page the document does not have: its first page, and a word.
    await page.goto(`${server.url}/inspect#/agents/${agentId}/threads/${docThread}/documents/${docObservation}?page=9`);
    await page.getByText('The document has no page 9').waitFor();
    expect(await page.locator('li.piece > p').allInnerTexts()).toEqual(onPage(1));
    // A citation of the document in the model's view opens it at the page the citation names.
    const question = 'Do lifeguards watch the pool?';
    const recall = (await api.post(`${agentPath()}/recall`, { query: question })).body;
    const cited = recall.citations.find((citation: any) => /^house-rules\.pdf, page \d+$/.test(citation.label));
    expect(cited.href).toBe(`/v1/agents/${agentId}/sources/${sourceId}`);
    await page.goto(`${server.url}/inspect#/agents/${agentId}/context?q=${encodeURIComponent(question)}`);
    await page.getByRole('region', { name: "The model's view" }).getByRole('link', { name: cited.label }).first().click();
    await page.getByRole('heading', { name: cited.label, level: 1 }).waitFor();
    expect(await page.locator('li.piece > p').allInnerTexts()).toEqual(onPage(Number(/page (\d+)$/.exec(cited.label)![1])));
    // The thread's documents table opens the document too.
    await page.goto(`${server.url}/inspect#/agents/${agentId}/threads/${docThread}`);
    await page.getByRole('heading', { name: /^Documents/ }).waitFor();
    await page.locator('td[data-label="Document"] a', { hasText: 'house-rules.pdf' }).click();
    await page.getByRole('heading', { name: 'house-rules.pdf, page 1', level: 1 }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows a memory's timeline: the version it replaced and what replaced it, from either end, as the API links them", async () => {
    const all = (await api.get(`${agentPath()}/memories?text_contains=phone&include_history=true`)).body.memories;
    const old = all.find((memory: any) => memory.text.includes('555-0100'));
    const current = all.find((memory: any) => memory.text.includes('555-0199'));
    expect(old.superseded_by).toBe(current.memory_id);
    const { page, problems } = await signedIn(`/agents/${agentId}/memories/${current.memory_id}`);
    await page.getByRole('heading', { name: /^Timeline/ }).waitFor();
    const kinds = () => page.locator('.timeline li').evaluateAll((items) => items.map((item) => item.getAttribute('data-kind')));
    expect(await kinds()).toEqual(['learned', 'superseded', 'learned']);
    expect(await page.getByRole('heading', { name: /^Timeline/ }).innerText()).toBe('Timeline (3 events)');
    const replaced = page.locator('.timeline li[data-kind="superseded"]');
    expect(await replaced.innerText()).toContain(`"${old.text}" was replaced by "${current.text}" (this memory)`);
    await page.screenshot({ path: `${ARTIFACTS}timeline.png`, fullPage: true });
    // The older version's page shows the same chain, walked the other way (through superseded_by).
    await replaced.getByRole('link', { name: `"${old.text}"` }).click();
    await page.waitForURL(new RegExp(old.memory_id));
    // The hash changes before the page renders again: wait for the older version's own timeline.
    await page.locator('.timeline li[data-kind="superseded"]', { hasText: `"${old.text}" (this memory)` }).waitFor();
    expect(await kinds()).toEqual(['learned', 'superseded', 'learned']);
    expect(await page.locator('.timeline li[data-kind="superseded"]').innerText()).toContain(`"${old.text}" (this memory) was replaced by "${current.text}"`);
    // The newer version deleted: the older one's timeline says its successor is gone.
    expect((await api.delete(`${agentPath()}/memories/${current.memory_id}`)).status).toBe(204);
    // (A delete leaves the older memory's superseded_by naming it: the old fact stays history.)
    expect((await api.get(`${agentPath()}/memories/${old.memory_id}`)).body.superseded_by).toBe(current.memory_id);
    await page.reload();
    await page.getByRole('heading', { name: /^Timeline/ }).waitFor();
    expect(await kinds()).toEqual(['learned', 'missing']);
    expect(await page.locator('.timeline li[data-kind="missing"]').innerText()).toContain('was replaced by a memory that is gone');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows a memory's merges and its expiry (an edit) on its timeline, each merge linked to its turn", async () => {
    const memory = (await api.get(`${agentPath()}/memories?text_contains=allergic`)).body.memories[0];
    expect(memory.also_from).toHaveLength(1);
    const patched = await api.patch(`${agentPath()}/memories/${memory.memory_id}`, { expires_at: '2099-01-01T00:00:00.000Z' });
    expect(patched.status).toBe(200);
    const { page, problems } = await signedIn(`/agents/${agentId}/memories/${memory.memory_id}`);
    await page.getByRole('heading', { name: /^Timeline/ }).waitFor();
    expect(await page.locator('.timeline li').evaluateAll((items) => items.map((item) => item.getAttribute('data-kind')))).toEqual(['learned', 'merged', 'expires']);
    const merge = page.locator('.timeline li[data-kind="merged"] a').first();
    expect(await merge.innerText()).toBe(`turn ${memory.also_from[0].turn_index + 1} of observation ${memory.also_from[0].observation_id.slice(0, 4)}…${memory.also_from[0].observation_id.slice(-6)}`);
    await merge.click();
    await page.getByRole('heading', { name: /^Conversation/ }).waitFor();
    expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('data-turn') ?? null")).toBe(`${memory.also_from[0].observation_id}.${memory.also_from[0].turn_index}`);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("sets, passes and clears a memory's expiry from its page, as the API then has it", async () => {
    const memory = (await api.get(`${agentPath()}/memories?text_contains=Captain%20Mango`)).body.memories[0];
    expect(memory.expires_at).toBeNull();
    const listed = async () => (await api.get(`${agentPath()}/memories?text_contains=Captain%20Mango`)).body.memories.length;
    const { page, problems } = await signedIn(`/agents/${agentId}/memories/${memory.memory_id}`);
    await page.getByRole('heading', { name: 'Expiry' }).waitFor();
    await page.getByLabel('Expires at').fill('2030-05-01T10:00');
    await page.getByRole('button', { name: 'Set expiry' }).click();
    await page.getByRole('button', { name: 'Never expire' }).waitFor();
    const expected = await page.evaluate<string>("new Date('2030-05-01T10:00').toISOString()");
    expect((await api.get(`${agentPath()}/memories/${memory.memory_id}`)).body.expires_at).toBe(expected);
    expect(await page.locator('.timeline li').evaluateAll((items) => items.map((item) => item.getAttribute('data-kind')))).toEqual(['learned', 'expires']);
    expect(await page.locator('#notice').innerText()).toContain('The memory now expires at');
    // A moment past: gone from the list at once, still shown here for audit.
    await page.getByLabel('Expires at').fill('2020-01-01T00:00');
    await page.getByRole('button', { name: 'Set expiry' }).click();
    await page.getByText('expired: gone from lists, search and chat').waitFor();
    expect(await listed()).toBe(0);
    expect(await page.locator('.timeline li').evaluateAll((items) => items.map((item) => item.getAttribute('data-kind')))).toEqual(['learned', 'expired']);
    await page.screenshot({ path: `${ARTIFACTS}expiry.png`, fullPage: true });
    await page.getByRole('button', { name: 'Never expire' }).click();
    await page.getByRole('button', { name: 'Never expire' }).waitFor({ state: 'detached' });
    expect((await api.get(`${agentPath()}/memories/${memory.memory_id}`)).body.expires_at).toBeNull();
    expect(await listed()).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("answers a try-out chat message beside the model's view, with the citations the model's view predicted", async () => {
    const question = 'Which pet does the guest in room 412 keep?';
    const { page, problems } = await signedIn(`/agents/${agentId}/context?q=${encodeURIComponent(question)}`);
    await page.getByRole('heading', { name: "The model's view", level: 1 }).waitFor();
    const modelView = page.getByRole('region', { name: "The model's view" });
    const pane = page.getByRole('region', { name: 'Try it in chat' });
    expect(await pane.getByLabel('Message to the agent').inputValue()).toBe(question);
    const predicted = await modelView.locator('td[data-label="Citation"] a').allInnerTexts();
    expect(predicted.length).toBeGreaterThan(0);
    const threadsBefore = (await api.get(agentPath())).body.threads.length;
    await pane.getByRole('button', { name: 'Ask the agent' }).click();
    await pane.locator('.chat-reply').waitFor();
    // The answer is the agent's message in the new try-out thread, as the API stored it.
    const agent = (await api.get(agentPath())).body;
    expect(agent.threads).toHaveLength(threadsBefore + 1);
    const tryOut = agent.threads.find((thread: any) => thread.title === 'Try-out');
    const messages = (await api.get(`${agentPath()}/threads/${tryOut.thread_id}`)).body.messages;
    expect(messages.map((message: any) => message.text)).toContain(question);
    expect(messages.map((message: any) => message.text)).toContain(await pane.locator('.chat-reply').innerText());
    // Chat cites what its answer used: citations the model's view showed for the same message.
    const cited = await pane.locator('td[data-label="Citation"] a').allInnerTexts();
    expect(cited.length).toBeGreaterThan(0);
    for (const label of cited) expect(predicted).toContain(label);
    // Both side by side on a wide screen.
    const [left, right] = await Promise.all([modelView.boundingBox(), pane.boundingBox()]);
    expect(right!.x).toBeGreaterThan(left!.x + left!.width - 1);
    await page.screenshot({ path: `${ARTIFACTS}chat-pane.png`, fullPage: true });
    // A second message goes to the same thread (now selected).
    await pane.getByLabel('Message to the agent').fill('Is the rooftop pool heated?');
    await pane.getByRole('button', { name: 'Ask the agent' }).click();
    await expect.poll(async () => (await api.get(`${agentPath()}/threads/${tryOut.thread_id}`)).body.messages.length).toBe(messages.length + 2);
    expect((await api.get(agentPath())).body.threads).toHaveLength(threadsBefore + 1);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('charts the memories learned per day and the credits charged per day, bar for bar as the API lists them', async () => {
    const memories: any[] = [];
    let cursor = '';
    do {
      const list = (await api.get(`${agentPath()}/memories?limit=100&include_history=true${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
      memories.push(...list.memories);
      cursor = list.next_cursor ?? '';
    } while (cursor);
    const { page, problems } = await signedIn(`/agents/${agentId}`);
    await page.getByRole('link', { name: /^Over time/ }).click();
    await page.getByRole('heading', { name: 'Over time', level: 1 }).waitFor();
    expect(await page.getByRole('heading', { name: /^Memories learned/ }).innerText()).toBe(`Memories learned (${memories.length})`);
    const bars = (locator = page.locator('svg.chart rect.bar')) => locator.evaluateAll((rects) => rects.map((rect) => [rect.getAttribute('data-label'), Number(rect.getAttribute('data-value'))]));
    expect(new Map((await bars()).filter(([, value]) => value !== 0) as [string, number][])).toEqual(perDay(memories.map((memory) => ({ at: memory.learned_at, value: 1 }))));
    expect(await page.locator('svg.chart rect.bar title').first().textContent()).toMatch(/^\d{4}-\d{2}-\d{2}: \d+ memories$/);
    await page.screenshot({ path: `${ARTIFACTS}memories-chart.png`, fullPage: true });

    await page.getByRole('link', { name: /^Credits over time/ }).click();
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    const ledger = (await api.get('/v1/billing?limit=100')).body.entries;
    const charges = ledger.filter((entry: any) => Number(entry.cost) > 0);
    expect(charges.length).toBeGreaterThan(0);
    expect(new Map((await bars()).filter(([, value]) => value !== 0) as [string, number][])).toEqual(perDay(charges.map((entry: any) => ({ at: entry.created_at, value: Number(entry.cost) }))));
    await page.screenshot({ path: `${ARTIFACTS}credits-chart.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("erases a person from their page after a confirmation: their threads and memories go, the others' stay", async () => {
    const personId = (await api.get(`${agentPath()}/logs?limit=100`)).body.entries.find((entry: any) => entry.thread_id === aliceThread).user_id;
    expect((await api.get(`${agentPath()}/memories?end_user_id=${personId}`)).body.memories.length).toBeGreaterThan(0);
    const othersBefore = (await api.get(`${agentPath()}/memories?thread_id=${phoneThread}&limit=100`)).body.memories.length;
    // Over HTTP: person_id is an eu_ id; anything else is the spec's error with a sentence naming the field.
    const bad = await api.post(`${agentPath()}/memories/erase`, { person_id: 'alice@example.com' });
    expect([bad.status, bad.body.code]).toEqual([422, 'invalid_request']);
    expect(bad.body.error).toContain('person_id');
    const { page, problems } = await signedIn(`/agents/${agentId}/people/${personId}`);
    await page.getByRole('heading', { name: 'Erase this person' }).waitFor();
    await page.getByRole('button', { name: 'Erase…' }).click();
    expect(await page.getByRole('alert').innerText()).toContain('Erase everything learned from the threads of person');
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await api.get(`${agentPath()}/memories?end_user_id=${personId}`)).body.memories.length).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Erase…' }).click();
    await page.getByRole('button', { name: 'Erase for good' }).click();
    await page.getByRole('heading', { name: 'Erasure completed', level: 1 }).waitFor();
    expect(await page.locator(`dd code.id[title="${personId}"]`).count()).toBe(1);
    expect((await api.get(`${agentPath()}/memories?end_user_id=${personId}`)).body.memories).toEqual([]);
    expect((await api.get(`${agentPath()}/threads/${aliceThread}`)).status).toBe(404);
    expect((await api.get(`${agentPath()}/memories?thread_id=${phoneThread}&limit=100`)).body.memories.length).toBe(othersBefore);
    await page.screenshot({ path: `${ARTIFACTS}person-erased.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });
  it('fits a phone-width screen (the chat pane under the model\'s view, charts and pages scaled) and asks chat with the keyboard alone', async () => {
    const { page, problems } = await signedIn();
    await page.setViewportSize({ width: 390, height: 844 });
    const fits = () => page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
    await page.goto(`${server.url}/inspect#/agents/${agentId}/context?q=${encodeURIComponent('Is the rooftop pool heated?')}`);
    await page.getByRole('heading', { name: "The model's view", level: 1 }).waitFor();
    const [view, pane] = await Promise.all([page.getByRole('region', { name: "The model's view" }).boundingBox(), page.getByRole('region', { name: 'Try it in chat' }).boundingBox()]);
    expect(pane!.y).toBeGreaterThanOrEqual(view!.y + view!.height - 1);
    expect(await fits()).toBe(true);
    // The keyboard alone: Tab to the message, change it, Tab on to the button, Enter.
    for (let i = 0; i < 60 && (await page.evaluate<string>('document.activeElement?.id ?? ""')) !== 'chat-message'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement?.id ?? ""')).toBe('chat-message');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Do lifeguards watch the pool?');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe('Ask the agent');
    await page.keyboard.press('Enter');
    await page.locator('.chat-reply').waitFor();
    const tryOuts = (await api.get(agentPath())).body.threads.filter((thread: any) => thread.title === 'Try-out');
    const messages = (await Promise.all(tryOuts.map(async (thread: any) => (await api.get(`${agentPath()}/threads/${thread.thread_id}`)).body.messages))).flat().map((message: any) => message.text);
    expect(messages).toContain('Do lifeguards watch the pool?');
    expect(messages).toContain(await page.locator('.chat-reply').innerText());
    await page.screenshot({ path: `${ARTIFACTS}chat-phone.png`, fullPage: true });
    for (const hash of [`/agents/${agentId}/charts`, `/agents/${agentId}/threads/${docThread}/documents/${docObservation}?page=2`, '/billing']) {
      await page.goto(`${server.url}/inspect#${hash}`);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      expect(await fits(), hash).toBe(true);
    }
    await page.goto(`${server.url}/inspect#/agents/${agentId}/charts`);
    await page.locator('svg.chart').waitFor();
    expect((await page.locator('svg.chart').boundingBox())!.width).toBeLessThanOrEqual(390);
    expect(problems).toEqual([]);
    await page.context().close();
  });
  it("shows an edit and a forgetting on a memory's timeline, dated as the API has them, from either version", async () => {
    const memory = (await api.get(`${agentPath()}/memories?text_contains=Captain%20Mango`)).body.memories[0];
    const edited = await api.patch(`${agentPath()}/memories/${memory.memory_id}`, { text: 'The guest in room 412 keeps a parrot named Captain Mango and a grey cat.' });
    expect(edited.status, edited.text).toBe(200);
    const newer = edited.body;
    expect(newer.edited.from_memory_id).toBe(memory.memory_id);
    const forgot = await api.post(`${agentPath()}/memories/${newer.memory_id}/forget`, { reason: 'The guest asked us to.' });
    expect(forgot.status, forgot.text).toBe(200);
    const { page, problems } = await signedIn(`/agents/${agentId}/memories/${newer.memory_id}`);
    await page.getByRole('heading', { name: /^Timeline/ }).waitFor();
    const kinds = () => page.locator('.timeline li').evaluateAll((items) => items.map((item) => item.getAttribute('data-kind')));
    expect(await kinds()).toEqual(['learned', 'edited', 'forgotten']);
    const edit = await page.locator('.timeline li[data-kind="edited"]').innerText();
    expect(edit).toContain(`"${memory.text}" was edited into "${newer.text}" (this memory) (by ${newer.edited.by})`);
    expect(edit.startsWith(`${await page.evaluate<string>(`new Date(${JSON.stringify(newer.edited.at)}).toLocaleString()`)}:`)).toBe(true);
    expect(await page.locator('.timeline li[data-kind="forgotten"]').innerText()).toContain('was forgotten: "The guest asked us to."');
    // Forgotten, it takes no expiry until restored.
    expect(await page.getByRole('heading', { name: 'Expiry' }).count()).toBe(0);
    await page.screenshot({ path: `${ARTIFACTS}timeline-edit.png`, fullPage: true });
    // From the older version: the same chain, walked forward.
    await page.locator('.timeline li[data-kind="edited"]').getByRole('link', { name: `"${memory.text}"` }).click();
    await page.waitForURL(new RegExp(memory.memory_id));
    // The hash changes before the page renders again (the old timeline, then "Loading…", then the
    // new one): wait for the older version's page, then read its timeline.
    await page.locator('.timeline li[data-kind="edited"]', { hasText: `"${memory.text}" (this memory)` }).waitFor();
    expect(await kinds()).toEqual(['learned', 'edited', 'forgotten']);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
