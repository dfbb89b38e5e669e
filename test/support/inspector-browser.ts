import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { testPrerequisite } from '@memory-agents/core/testing';
import type { Browser, Page } from 'playwright-core';
import type { ServerProcess } from './server.js';

// What the inspector's browser tests share: Debian's chromium, where screenshots go, a page signed
// in with the server's first key that records every page error and unexpected console error.

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
export const haveBrowser = testPrerequisite(CHROMIUM !== undefined, 'inspector browser tests', 'no chromium at /usr/bin/chromium (apt-get install --no-install-recommends chromium)');
/** Screenshots land here (test artifacts; not committed). */
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/inspector/', import.meta.url));

/** A new page signed in with the server's key, opened at `#hash`; `problems` collects page errors (a refusal of the API is not one). */
export async function signedInPage(browser: Browser, server: ServerProcess, hash: string): Promise<{ page: Page; problems: string[] }> {
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !(message.text().startsWith('Failed to load resource') && message.location().url.includes('/inspect/api/'))) problems.push(`console: ${message.text()}`);
  });
  await page.goto(`${server.url}/inspect`);
  await page.getByLabel('API key').fill(server.key!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: /^Agents/, level: 1 }).waitFor();
  await page.goto(`${server.url}/inspect#${hash}`);
  return { page, problems };
}

/** The value of a fact (`dl.facts`) by its label. */
export const fact = (page: Page, label: string) => page.locator('dl.facts dt', { hasText: label }).locator('xpath=following-sibling::dd[1]').innerText();
