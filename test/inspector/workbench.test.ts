import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { testPrerequisite } from '@memory-agents/core/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { observeAndSettle, pollStatus, said } from '../learning/learning-support.js';
import { postForm } from '../documents/document-support.js';

// The inspector as a workbench (issue 45), driven in Debian's chromium as a person would, each view
// compared with what the API answers: the conversation of a thread with each turn's memories, a
// memory's provenance landing on its turn, the memory list with history, search as of a moment,
// the model's view of a message, counts, and a delete that asks first.

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const haveBrowser = testPrerequisite(CHROMIUM !== undefined, 'inspector browser tests', 'no chromium at /usr/bin/chromium (apt-get install --no-install-recommends chromium)');

/** Screenshots land here (test artifacts; not committed). */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/inspector/', import.meta.url));

const at = (text: string, timestamp: string) => ({ content: [{ type: 'text', text }], timestamp });

describe.skipIf(!haveBrowser)('the inspector as a workbench', () => {
  let server: ServerProcess;
  let api: Client;
  let browser: Browser;
  let agentId: string;
  let phoneThread: string;
  let longThread: string;
  let lastObservation: string;
  let aliceThread: string;
  let docThread: string;
  // A filename that would run if it reached the page as HTML.
  const FILENAME = `<img src=x onerror="window.__pwned='file'">menu.md`;
  const alice = { 'X-SP-End-User': 'alice@example.com' };

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    server = await startServerProcess();
    api = client(server.url, server.key);
    agentId = (await readyAgent(api, { role: 'Concierge', objective: 'remember guests' })).agent_id;
    phoneThread = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'Phone numbers' })).body.thread_id;
    // A fact and its change in one job: the old number is superseded (history).
    await observeAndSettle(api, agentId, phoneThread, [at('My phone number is 555-0100.', '2024-01-10T09:00:00.000Z'), at('My new phone number is 555-0199.', '2024-04-02T18:30:00.000Z')]);
    longThread = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'A long stay' })).body.thread_id;
    await observeAndSettle(api, agentId, longThread, Array.from({ length: 100 }, (_, i) => said(`Guest note ${i + 1}: room ${200 + i} asked for extra towels.`)));
    const last = await observeAndSettle(api, agentId, longThread, [said('The guest in room 412 keeps a parrot named Captain Mango.'), said('Breakfast for room 412 is at seven.')]);
    lastObservation = last.observation_id;
    // A person's own thread (X-SP-End-User), and the organization's calls beside it.
    aliceThread = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'Alice plans a trip' }, { headers: alice })).body.thread_id;
    await observeAndSettle(api, agentId, aliceThread, [said('I am flying to Lisbon on Friday.'), said('My seat is 14C.')], alice);
    docThread = (await api.post(`/v1/agents/${agentId}/threads`, { title: 'The menu' })).body.thread_id;
    const menu = new TextEncoder().encode('# Breakfast\n\nThe hotel serves breakfast from six to ten in the garden room.\n\n# Dinner\n\nDinner is served from seven in the lobby restaurant.\n');
    const uploaded = await postForm(server.url, server.key!, `/v1/agents/${agentId}/threads/${docThread}/observe-file`, { data: menu, filename: FILENAME, type: 'text/markdown' }, { max_chars: '300', overlap_chars: '0' });
    expect(uploaded.status, uploaded.text).toBe(202);
    await pollStatus(api, `/v1/agents/${agentId}/threads/${docThread}/observe/${uploaded.body.observation_id}/status`);
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  async function signedIn(hash = ''): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('response', (response) => {
      if (response.status() === 404 && !response.url().includes('/inspect/api/')) problems.push(`404: ${response.url()}`);
    });
    await page.goto(`${server.url}/inspect`);
    await page.getByLabel('API key').fill(server.key!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    if (hash) await page.goto(`${server.url}/inspect#${hash}`);
    return { page, problems };
  }

  const agentPath = () => `/v1/agents/${agentId}`;
  const mainText = (page: Page) => page.locator('main').innerText();

  it('serves a favicon the page names, so no load asks for a missing one', async () => {
    const icon = await fetch(`${server.url}/inspect/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toMatch(/^<svg /);
    expect(await (await fetch(`${server.url}/inspect`)).text()).toContain('<link rel="icon" href="/inspect/favicon.svg"');
  });

  it('reads a thread\'s turns over HTTP, paged, narrowed like the other thread routes', async () => {
    const first = await api.get(`${agentPath()}/threads/${longThread}/turns?limit=60`);
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(102);
    expect(first.body.turns).toHaveLength(60);
    const second = await api.get(`${agentPath()}/threads/${longThread}/turns?limit=60&cursor=${first.body.next_cursor}`);
    expect(second.body.turns.map((turn: any) => turn.text).slice(-2)).toEqual(['The guest in room 412 keeps a parrot named Captain Mango.', 'Breakfast for room 412 is at seven.']);
    expect(second.body.next_cursor).toBe('');
    expect((await api.get(`${agentPath()}/threads/${longThread}/turns?cursor=nonsense`)).body.code).toBe('invalid_request');
    const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Elsewhere', '--data', server.dataDir, '--json'])).stdout);
    const otherKey = JSON.parse((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout).key;
    const foreign = await api.get(`${agentPath()}/threads/${longThread}/turns`, { key: otherKey });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'agent_not_found']);
    // The organization's thread is not a person's: with X-SP-End-User it does not exist.
    const person = await api.get(`${agentPath()}/threads/${longThread}/turns`, { headers: { 'X-SP-End-User': 'guest-7' } });
    expect([person.status, person.body.code]).toEqual([404, 'thread_not_found']);
  });

  it('shows the conversation in order with each turn\'s memories beside it, as the API has them', async () => {
    const { page, problems } = await signedIn();
    await page.getByRole('link', { name: 'Concierge' }).click();
    await page.getByRole('link', { name: 'Phone numbers' }).click();
    await page.getByRole('heading', { name: 'Conversation' }).waitFor();
    const turns = (await api.get(`${agentPath()}/threads/${phoneThread}/turns`)).body;
    expect(await page.getByRole('heading', { name: 'Conversation' }).innerText()).toBe(`Conversation (${turns.total} turns)`);
    const shown = await page.locator('li.turn > p').allInnerTexts();
    expect(shown).toEqual(turns.turns.map((turn: any) => turn.text));
    const memories = (await api.get(`${agentPath()}/memories?thread_id=${phoneThread}&include_history=true&limit=100`)).body.memories;
    for (const turn of turns.turns) {
      const expected = memories.filter((memory: any) => memory.source.observation_id === turn.observation_id && memory.source.turn_index === turn.turn_index).map((memory: any) => memory.text);
      expect(expected.length).toBeGreaterThan(0);
      const beside = await page.locator(`li.turn[data-turn="${turn.observation_id}.${turn.turn_index}"] .turn-memories a`).allInnerTexts();
      expect(beside.sort()).toEqual(expected.sort());
    }
    await page.screenshot({ path: `${ARTIFACTS}conversation.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('follows a memory to the exact turn it came from, also past the first page of turns', async () => {
    const memory = (await api.get(`${agentPath()}/memories?text_contains=Captain%20Mango`)).body.memories[0];
    expect(memory.source.observation_id).toBe(lastObservation);
    const { page, problems } = await signedIn(`/agents/${agentId}/memories/${memory.memory_id}`);
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    // The memory page quotes the turn's words, its verbatim span marked.
    const words = (await api.get(`${agentPath()}/threads/${longThread}/turns?observation_id=${lastObservation}`)).body.turns[memory.source.turn_index].text;
    expect(await page.locator('.source-words').innerText()).toBe(words);
    expect(memory.span).not.toBeNull();
    expect(await page.locator('.source-words mark').innerText()).toBe(words.slice(memory.span.start, memory.span.end));
    const from = page.getByRole('link', { name: `turn ${memory.source.turn_index + 1} of observation` });
    await from.click();
    await page.getByRole('heading', { name: 'Conversation' }).waitFor();
    expect(decodeURIComponent(page.url())).toContain(`?turn=${lastObservation}.${memory.source.turn_index}`);
    // The turn (in an observation after the first 100 turns) has the focus, and its words are the API's.
    const focused = await page.evaluate<string | null>("document.activeElement?.getAttribute('data-turn') ?? null");
    expect(focused).toBe(`${lastObservation}.${memory.source.turn_index}`);
    const turn = (await api.get(`${agentPath()}/threads/${longThread}/turns?observation_id=${lastObservation}`)).body.turns[memory.source.turn_index];
    expect(await page.locator('li.turn.target > p').innerText()).toBe(turn.text);
    expect(await mainText(page)).toContain('Only observation');
    await page.screenshot({ path: `${ARTIFACTS}turn.png` });
    // And back: the memory beside the turn opens the memory.
    await page.locator('li.turn.target .turn-memories a').first().click();
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    expect(await page.locator('.memory-text').innerText()).toBe(memory.text);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('lists memories with history on request, as the memories API does', async () => {
    const { page, problems } = await signedIn(`/agents/${agentId}?contains=phone`);
    await page.getByRole('heading', { name: 'Memories' }).waitFor();
    const current = (await api.get(`${agentPath()}/memories?text_contains=phone`)).body.memories.map((memory: any) => memory.text);
    expect(await page.locator('td[data-label="Memory"] a').allInnerTexts()).toEqual(current);
    await page.getByLabel('Include history (superseded memories)').check();
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/history=1/);
    await page.getByRole('heading', { name: 'Memories' }).waitFor();
    const all = (await api.get(`${agentPath()}/memories?text_contains=phone&include_history=true`)).body.memories;
    expect(all.length).toBeGreaterThan(current.length);
    await expect.poll(() => page.locator('td[data-label="Memory"] a').allInnerTexts()).toEqual(all.map((memory: any) => memory.text));
    const old = all.find((memory: any) => memory.superseded_by);
    expect(old.text).toContain('555-0100');
    expect(await page.locator('td[data-label="Memory"]', { hasText: '555-0100' }).innerText()).toContain('history');
    expect(await page.getByLabel('Include history (superseded memories)').isChecked()).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}history.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('searches as of a moment in the past, as the search API does', async () => {
    const { page, problems } = await signedIn(`/agents/${agentId}`);
    await page.getByLabel('Search as a chat turn would').fill('What is my phone number?');
    await page.locator('#ask-as-of').fill('2024-03-01T12:00');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor();
    const asOf = new URLSearchParams(page.url().split('?')[1]).get('as_of')!;
    expect(new Date(asOf).getTime()).toBe(new Date(await page.evaluate<string>("new Date('2024-03-01T12:00').toISOString()")).getTime());
    const result = (await api.post(`${agentPath()}/memories/search`, { query: 'What is my phone number?', as_of: asOf })).body;
    expect(result.hits[0].memory.text).toContain('555-0100');
    await page.locator('tbody tr').first().waitFor();
    expect(await page.locator('td[data-label="Memory"] a').allInnerTexts()).toEqual(result.hits.map((hit: any) => hit.memory.text));
    expect(await page.getByRole('heading', { name: 'Hits' }).innerText()).toBe(`Hits (${result.hits.length})`);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows the model\'s view of a message: the exact memory context and citations of recall', async () => {
    const { page, problems } = await signedIn(`/agents/${agentId}`);
    await page.getByLabel('Message', { exact: true }).fill('Which pet does the guest in room 412 keep?');
    await page.getByRole('button', { name: 'Show the context' }).click();
    await page.getByRole('heading', { name: "The model's view", level: 1 }).waitFor();
    const recall = (await api.post(`${agentPath()}/recall`, { query: 'Which pet does the guest in room 412 keep?' })).body;
    expect(recall.memory_context).toContain('Captain Mango');
    expect(await page.locator('pre.context').textContent()).toBe(recall.memory_context);
    expect(await page.getByRole('heading', { name: 'Citations' }).innerText()).toBe(`Citations (${recall.citations.length})`);
    expect(await page.locator('td[data-label="Citation"] a').allInnerTexts()).toEqual(recall.citations.map((citation: any) => citation.label));
    await page.screenshot({ path: `${ARTIFACTS}model-view.png`, fullPage: true });
    // A citation of a turn opens that turn.
    await page.locator('td[data-label="Citation"] a').first().click();
    await page.getByRole('heading', { name: 'Conversation' }).waitFor();
    expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('data-turn') ?? null")).not.toBeNull();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('counts agents, threads and a thread\'s turns as the API does', async () => {
    const { page, problems } = await signedIn();
    const agents = (await api.get('/v1/agents')).body;
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(`Agents (${agents.length})`);
    await page.getByRole('link', { name: 'Concierge' }).click();
    await page.getByRole('heading', { name: 'Threads' }).waitFor();
    const agent = (await api.get(agentPath())).body;
    expect(await page.getByRole('heading', { name: 'Threads' }).innerText()).toBe(`Threads (${agent.threads.length})`);
    // Readable names, not ids, are the link text; the id is short, with a copy button.
    expect(await page.locator('td[data-label="Thread"] a').allInnerTexts()).toEqual(agent.threads.map((thread: any) => thread.title));
    expect(await page.locator('td[data-label="Id"] code').first().getAttribute('title')).toBe(agent.threads[0].thread_id);
    expect(await mainText(page)).not.toContain(agent.threads[0].thread_id);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: `Copy ${agent.threads[0].thread_id}` }).click();
    await expect.poll(() => page.locator('#notice').innerText()).toBe(`Copied ${agent.threads[0].thread_id}.`);
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(agent.threads[0].thread_id);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('deletes a memory only after a confirmation, and says so on the page it lands on', async () => {
    const memory = (await api.get(`${agentPath()}/memories?text_contains=Breakfast`)).body.memories[0];
    const { page, problems } = await signedIn(`/agents/${agentId}/memories/${memory.memory_id}`);
    await page.getByRole('button', { name: 'Delete this memory…' }).click();
    // The first click only asks; cancelling keeps the memory.
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe('Delete for good');
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await api.get(`${agentPath()}/memories/${memory.memory_id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete this memory…' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'Threads' }).waitFor();
    expect(await page.locator('#notice').innerText()).toContain('was deleted');
    expect((await api.get(`${agentPath()}/memories/${memory.memory_id}`)).status).toBe(404);
    // The notice goes with the next page change.
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    expect(await page.locator('#notice').innerText()).toBe('');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows the page asked for last, even when an earlier page\'s reads answer later', async () => {
    const { page, problems } = await signedIn();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The thread page's turns are held until the billing page, asked for after it, is shown.
    await page.route('**/inspect/api/v1/agents/*/threads/*/turns*', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${server.url}/inspect#/agents/${agentId}/threads/${phoneThread}`);
    await page.goto(`${server.url}/inspect#/billing`);
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    release();
    await page.waitForResponse((response) => response.url().includes('/turns'));
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Billing');
    expect(await page.locator('main').innerText()).not.toContain('Conversation');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('lists the people who used the agent and shows what it knows about one of them, as the API has it', async () => {
    const { page, problems } = await signedIn(`/agents/${agentId}`);
    await page.getByRole('link', { name: /^People/ }).click();
    await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    const log = (await api.get(`${agentPath()}/logs?limit=100`)).body.entries;
    const personIds = [...new Set<string>(log.map((entry: any) => entry.user_id).filter((id: string) => id.startsWith('eu_')))];
    expect(personIds).toHaveLength(1);
    const [personId] = personIds as [string];
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('People (1)');
    expect(await page.locator('td[data-label="Threads"]').allInnerTexts()).toEqual(['1']);
    await page.getByRole('link', { name: /^Person eu_/ }).click();
    await page.getByRole('heading', { name: /^Person eu_/, level: 1 }).waitFor();
    expect(await page.locator('dd code.id').first().getAttribute('title')).toBe(personId);
    expect(await page.locator('td[data-label="Thread"] a').allInnerTexts()).toEqual(['Alice plans a trip']);
    const theirs = (await api.get(`${agentPath()}/memories?end_user_id=${personId}`)).body.memories.map((memory: any) => memory.text);
    expect(theirs.sort()).toEqual(['I am flying to Lisbon on Friday.', 'My seat is 14C.']);
    expect((await page.locator('td[data-label="Memory"] a').allInnerTexts()).sort()).toEqual(theirs);
    expect(await mainText(page)).not.toContain('Captain Mango');
    await page.screenshot({ path: `${ARTIFACTS}person.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows a document\'s pieces in the conversation with their file, as text', async () => {
    const { page, problems } = await signedIn(`/agents/${agentId}/threads/${docThread}`);
    await page.getByRole('heading', { name: 'Conversation' }).waitFor();
    const turns = (await api.get(`${agentPath()}/threads/${docThread}/turns`)).body.turns;
    expect(turns.length).toBeGreaterThan(0);
    // (The multipart encoder escapes the quotes of the name; the markup stays.)
    const filename: string = turns[0].document.filename;
    expect(filename).toMatch(/^<img src=x onerror=.*menu\.md$/);
    expect(turns[0]).toMatchObject({ kind: 'document', document: { piece: 0 } });
    expect(await page.locator('li.turn > p').allInnerTexts()).toEqual(turns.map((turn: any) => turn.text));
    expect(await page.locator('li.turn .turn-head').first().innerText()).toContain(`${filename}, piece 1`);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate<string | null>('window.__pwned ?? null')).toBeNull();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('follows a memory to its turn and back with the keyboard alone', async () => {
    const memory = (await api.get(`${agentPath()}/memories?text_contains=555-0199`)).body.memories[0];
    const { page, problems } = await signedIn(`/agents/${agentId}/memories/${memory.memory_id}`);
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    const focusedHref = () => page.evaluate<string>("document.activeElement?.getAttribute('href') ?? ''");
    for (let i = 0; i < 20 && !(await focusedHref()).includes('?turn='); i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Conversation' }).waitFor();
    expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('data-turn') ?? null")).toBe(`${memory.source.observation_id}.${memory.source.turn_index}`);
    // The next Tab stop is the memory beside the turn.
    await page.keyboard.press('Tab');
    expect(await focusedHref()).toContain(`/memories/${memory.memory_id}`);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    expect(page.url()).toContain(memory.memory_id);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('opens a thread at a turn it does not have with its conversation and a word, not an error page', async () => {
    const { page, problems } = await signedIn();
    const turns = (await api.get(`${agentPath()}/threads/${phoneThread}/turns`)).body.turns.map((turn: any) => turn.text);
    for (const turn of ['obs_01ARZ3NDEKTSV4RRFFQ69G5FAV.0', 'garbage', `${lastObservation}.0`]) {
      await page.goto(`${server.url}/inspect#/agents/${agentId}/threads/${phoneThread}?turn=${encodeURIComponent(turn)}`);
      await page.getByText('The turn this link names is not in this thread').waitFor();
      expect(await page.locator('li.turn > p').allInnerTexts(), turn).toEqual(turns);
      await page.goto(`${server.url}/inspect#/`);
      await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
