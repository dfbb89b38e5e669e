import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { testPrerequisite } from '@memory-agents/core/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { observeAndSettle, said } from '../learning/learning-support.js';

// The agent's settings in the inspector (issues 42 and 44), driven in Debian's chromium as a person
// would: the memory scope and the redaction policy shown, changed and saved, the API agreeing, a
// kind the server does not know refused with the server's own sentence.

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const haveBrowser = testPrerequisite(CHROMIUM !== undefined, 'inspector browser tests', 'no chromium at /usr/bin/chromium (apt-get install --no-install-recommends chromium)');
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/inspector/', import.meta.url));

describe.skipIf(!haveBrowser)("the inspector's agent settings", () => {
  let server: ServerProcess;
  let api: Client;
  let browser: Browser;
  let agentId: string;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    const dataDir = await mkdtemp(join(tmpdir(), 'ma-e2e-'));
  server = await startServerProcess({ dataDir, args: ['--data', dataDir, '--redact-pattern', 'room_code=\\bRC-\\d{4}\\b'] });
    api = client(server.url, server.key);
    agentId = (await readyAgent(api, { role: 'Front desk', objective: 'remember guests', metadata: { team: 'night' } })).agent_id;
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  async function agentPage(): Promise<{ page: Page; problems: string[] }> {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.goto(`${server.url}/inspect`);
    await page.getByLabel('API key').fill(server.key!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Front desk' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    return { page, problems };
  }
  const fact = (page: Page, label: string) => page.locator('dl.facts dt', { hasText: label }).locator('xpath=following-sibling::dd[1]').innerText();

  it('shows the settings, saves a new scope and redaction policy, and the API and the next turn agree', async () => {
    const { page, problems } = await agentPage();
    expect(await fact(page, 'Redacted before storing')).toBe('nothing');
    expect(await page.getByLabel('Memory scope').inputValue()).toBe('agent');
    await page.getByLabel('Memory scope').selectOption('end_user');
    await page.getByLabel('e-mail addresses').check();
    await page.getByLabel('card numbers (Luhn-checked)').check();
    await page.getByLabel("The server's own kinds, comma-separated").fill('room_code');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await page.screenshot({ path: `${ARTIFACTS}settings-saved.png`, fullPage: true });

    const config = (await api.get(`/v1/agents/${agentId}`)).body.agent_config;
    // The rest of the config is kept as it was.
    expect(config).toEqual({ role: 'Front desk', objective: 'remember guests', metadata: { team: 'night' }, memory_scope: 'end_user', extraction_policy: { redact: ['card_number', 'email', 'room_code'], version: 1 } });
    expect(await fact(page, 'Redacted before storing')).toBe('card_number, email, room_code');
    expect(await fact(page, 'Memory scope')).toContain('per person');
    expect(await page.getByLabel('e-mail addresses').isChecked()).toBe(true);

    const threadId = (await api.post(`/v1/agents/${agentId}/threads`, {})).body.thread_id;
    await observeAndSettle(api, agentId, threadId, [said('Write to guest@example.com about RC-1234.')]);
    const turns = (await api.get(`/v1/agents/${agentId}/threads/${threadId}/turns`)).body.turns;
    expect(turns.map((turn: { text: string }) => turn.text)).toEqual(['Write to [redacted:email] about [redacted:room_code].']);
    expect(problems).toEqual([]);
  });

  it('keeps the learning rules set over the API when it saves, and shows them', async () => {
    const exclude = [{ keywords: ['password'] }, { speakers: ['bot'] }];
    const current = (await api.get(`/v1/agents/${agentId}`)).body.agent_config;
    const set = await api.patch(`/v1/agents/${agentId}`, { agent_config: { ...current, extraction_policy: { ...current.extraction_policy, exclude } } });
    expect(set.status, set.text).toBe(200);
    const { page, problems } = await agentPage();
    expect(await page.locator('#learning-rules').innerText()).toContain('never learn "password"; never learn speaker bot');
    await page.getByLabel('Memory scope').selectOption('agent');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const config = (await api.get(`/v1/agents/${agentId}`)).body.agent_config;
    expect(config.memory_scope).toBe('agent');
    expect(config.extraction_policy.exclude).toEqual(exclude);
    expect(problems).toEqual([]);
  });

  it("refuses a kind the server does not know with the server's sentence, and changes nothing", async () => {
    const before = (await api.get(`/v1/agents/${agentId}`)).body.agent_config;
    const { page, problems } = await agentPage();
    await page.getByLabel("The server's own kinds, comma-separated").fill('passport');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const notice = page.locator('.notice.error');
    await notice.waitFor();
    expect(await notice.innerText()).toContain('passport, which this server does not know');
    expect(await notice.innerText()).toContain('(422 invalid_request)');
    expect((await api.get(`/v1/agents/${agentId}`)).body.agent_config).toEqual(before);
    expect(problems).toEqual([]);
  });

  it('edits the learning rules, categories, guidance and language of the policy; a new version; the API and the next memories agree (issue 44)', async () => {
    const { page, problems } = await agentPage();
    const before = (await api.get(`/v1/agents/${agentId}`)).body.agent_config.extraction_policy.version;
    await page.getByLabel('Exclude rules (JSON: speakers, keywords, patterns, categories)').fill('[{"patterns": ["order #?\\\\d{4,12}"]}, {"categories": ["smalltalk"]}]');
    await page.getByLabel('Include rules (JSON; empty: learn every turn)').fill('');
    await page.getByLabel('Categories, one a line (name: description; keyword, keyword)').fill('preference: what a guest likes; prefer, favourite\nsmalltalk; weather');
    await page.getByLabel('Guidance for the LLM writer (passed to the model as data)').fill('Remember what guests prefer.');
    await page.getByLabel('Language of memories (speaker, or a tag such as de)').fill('de');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const policy = (await api.get(`/v1/agents/${agentId}`)).body.agent_config.extraction_policy;
    expect(policy).toMatchObject({
      exclude: [{ patterns: ['order #?\\d{4,12}'] }, { categories: ['smalltalk'] }],
      categories: [{ name: 'preference', description: 'what a guest likes', keywords: ['prefer', 'favourite'] }, { name: 'smalltalk', keywords: ['weather'] }],
      instructions: 'Remember what guests prefer.',
      language: 'de',
      version: before + 1,
    });
    expect(policy.include).toBeUndefined();
    expect(await page.locator('#learning-rules').innerText()).toContain('never learn /order #?\\d{4,12}/; never learn category smalltalk');
    expect(await page.getByLabel('Categories, one a line (name: description; keyword, keyword)').inputValue()).toBe('preference: what a guest likes; prefer, favourite\nsmalltalk; weather');

    const threadId = (await api.post(`/v1/agents/${agentId}/threads`, {})).body.thread_id;
    await observeAndSettle(api, agentId, threadId, [said('Where is order #48213?'), said('Lovely weather today.'), said('I prefer the quiet room.')]);
    const memories = (await api.get(`/v1/agents/${agentId}/memories?thread_id=${threadId}`)).body.memories;
    expect(memories.map((memory: { text: string; category: string | null; policy_version: number }) => [memory.text, memory.category, memory.policy_version])).toEqual([['I prefer the quiet room.', 'preference', before + 1]]);
    expect(problems).toEqual([]);
  });

  it("shows what is wrong with the policy: rules that are not JSON (before sending), a pattern the server refuses (its sentence)", async () => {
    const before = (await api.get(`/v1/agents/${agentId}`)).body.agent_config;
    const { page, problems } = await agentPage();
    const notice = page.locator('.notice.error');
    await page.getByLabel('Exclude rules (JSON: speakers, keywords, patterns, categories)').fill('[{"keywords": ["x"]');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await notice.waitFor();
    expect(await notice.innerText()).toContain('Exclude rules are not valid JSON');
    await page.getByLabel('Exclude rules (JSON: speakers, keywords, patterns, categories)').fill('[{"patterns": ["(a+)+$"]}]');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('repeats a group').waitFor();
    expect(await notice.innerText()).toContain('extraction_policy.exclude[0].patterns[0] repeats a group');
    expect(await notice.innerText()).toContain('(422 invalid_request)');
    expect((await api.get(`/v1/agents/${agentId}`)).body.agent_config).toEqual(before);
    expect(problems).toEqual([]);
  });
});
