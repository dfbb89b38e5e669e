import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { testPrerequisite } from '@memory-agents/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, readLedger, readyAgent, type Client } from '../support/client.js';
import { countTokens } from '../support/database-proxy.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server.js';

/**
 * The embedded default (`serve --data DIR`) on storage that turns read-only under the running
 * server: an ext4 image on a loop device mounted `errors=remount-ro`, flipped read-only through
 * ext4's `trigger_fs_error` (what a failing disk does). PGlite would spin in its WAL flush on the
 * server's thread; the server must instead answer every request within a bound (503 naming the
 * data dir for the store, /healthz live, /readyz not ready), stop on SIGTERM, and, once the
 * storage is repaired (umount, e2fsck, mount) and the server restarted, have every observation
 * acknowledged before the flip learned exactly once with the ledger exact.
 * Needs root on Linux with losetup, mkfs.ext4 and e2fsck; skipped with a line saying so otherwise,
 * a failure under `CI=true`.
 */
const TOOLS = ['losetup', 'mkfs.ext4', 'e2fsck', 'mount', 'umount'];
const missing = TOOLS.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0);
let reason: string | null = null;
if (process.platform !== 'linux' || process.getuid?.() !== 0) reason = 'needs root on Linux (a loop device)';
else if (missing.length > 0) reason = `needs ${missing.join(', ')}`;
else if (!existsSync('/sys/fs/ext4')) reason = 'needs ext4 in the kernel';

let root = '';
let image = '';
let mountPoint = '';
let loop = '';
let mounted = false;
if (!reason) {
  try {
    root = await mkdtemp(join(tmpdir(), 'ma-ro-storage-'));
    image = join(root, 'disk.img');
    mountPoint = join(root, 'mnt');
    await writeFile(image, '');
    await truncate(image, 256 * 1024 * 1024);
    execFileSync('mkfs.ext4', ['-q', '-F', image], { stdio: 'ignore' });
    loop = execFileSync('losetup', ['-f', '--show', image], { encoding: 'utf8' }).trim();
    execFileSync('mkdir', ['-p', mountPoint]);
    mountStorage();
  } catch (error) {
    reason = `could not set up a loop device: ${(error as Error).message.split('\n')[0]}`;
    await cleanUp();
  }
}
// Under CI=true a missing prerequisite fails (CI runs as root with loop devices): the guarantee is checked.
const runs = testPrerequisite(!reason, 'storage that turns read-only', reason ?? '');

function mountStorage(): void {
  execFileSync('mount', ['-o', 'errors=remount-ro', loop, mountPoint], { stdio: 'ignore' });
  mounted = true;
}
function unmountStorage(): void {
  if (!mounted) return;
  // A process that just exited may still hold the mount for a moment.
  for (let attempt = 0; attempt < 50; attempt++) {
    if (spawnSync('umount', [mountPoint], { stdio: 'ignore' }).status === 0) {
      mounted = false;
      return;
    }
    spawnSync('sleep', ['0.1']);
  }
  spawnSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
  mounted = false;
}
async function cleanUp(): Promise<void> {
  unmountStorage();
  if (loop) spawnSync('losetup', ['-d', loop], { stdio: 'ignore' });
  loop = '';
  if (root) await rm(root, { recursive: true, force: true });
}

/** The longest a request may take after the flip: the watchdog checks the storage after 2 s. */
const ANSWER_BOUND_MS = 15_000;
const WORDS = ['amber', 'birch', 'cedar', 'dune', 'ember', 'fjord'];

describe.runIf(runs)('the embedded default on storage that turns read-only', () => {
  let server: ServerProcess | null = null;
  const dataDir = join(mountPoint, 'data');
  let api: Client;
  let base = '';
  let agentId = '';
  let counter = 0;
  const acknowledged = new Set<string>();
  const sent = new Set<string>();
  const observationIds: string[] = [];

  beforeAll(async () => {
    server = await startServerProcess({ dataDir });
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await cleanUp();
  }, 60_000);

  const token = () => {
    const next = `tok${(counter++).toString().padStart(5, '0')}x`;
    sent.add(next);
    return next;
  };
  const said = (tok: string, i: number) => ({
    observations: [{ speaker: 'ana', content: [{ type: 'text', text: `Note ${tok}: the ${WORDS[i % WORDS.length]} crate ships on day ${i}.` }] }],
  });
  const committed = (observationId: string) =>
    eventually(async () => {
      const status = await api.get(`${base}/observe/${observationId}/status`);
      if (status.status === 200 && status.body.status === 'failed') throw new Error(`${observationId} failed: ${status.text}`);
      return status.status === 200 && status.body.status === 'committed';
    }, `${observationId} committed`);
  /** Observes one token until it is accepted (202; a 429 while the agent still learns is retried). */
  const observe = async (): Promise<string> => {
    const tok = token();
    const accepted = await eventually(async () => {
      const answer = await api.post(`${base}/observe`, said(tok, counter));
      if (answer.status !== 202 && answer.status !== 429) throw new Error(`observe: ${answer.status} ${answer.text}`);
      return answer.status === 202 ? answer : null;
    }, 'an observe accepted');
    acknowledged.add(tok);
    observationIds.push(accepted.body.observation_id as string);
    return accepted.body.observation_id as string;
  };
  /** One request that must be answered within the bound (a hang fails it). */
  const bounded = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server!.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(ANSWER_BOUND_MS),
    });
    const text = await response.text();
    return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
  };
  /**
   * An observe after the flip. While the acknowledged observation's learning has not yet written,
   * nothing has touched the failed storage and the agent's slot is truthfully busy: 429 with
   * Retry-After. A client that retries as told must get the 503 within the bound.
   */
  const observeAfterFlip = async (tok: string, i: number) => {
    const started = Date.now();
    for (;;) {
      const answer = await bounded('POST', `${base}/observe`, said(tok, i));
      if (answer.status !== 429) return answer;
      expect(answer.body).toMatchObject({ code: 'rate_limit_exceeded', details: 'capacity' });
      expect(Date.now() - started, 'a 429 past the bound').toBeLessThan(ANSWER_BOUND_MS);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  let apiKey = '';

  it('answers every request after the flip (503 naming the data dir), stays live, and stops on SIGTERM', async () => {
    const cli = async (...words: string[]) => {
      const result = await runCli([...words, '--data', dataDir, '--json']);
      if (result.code !== 0) throw new Error(`memory-agents ${words.join(' ')}: ${result.code} ${result.stderr}`);
      return JSON.parse(result.stdout);
    };
    const org = await cli('orgs', 'create', '--name', 'Read-only storage', '--credits', '1000');
    apiKey = (await cli('keys', 'create', '--org', org.organization_id)).key;
    api = client(server!.url, apiKey);
    agentId = (await readyAgent(api)).agent_id;
    base = `/v1/agents/${agentId}/threads/${(await api.post(`/v1/agents/${agentId}/threads`, {})).body.thread_id}`;
    for (let i = 0; i < 3; i++) await committed(await observe());
    // Acknowledged, its learning maybe still running when the storage fails.
    await observe();

    execFileSync('sh', ['-c', `echo 1 > /sys/fs/ext4/${basename(loop)}/trigger_fs_error`]);
    await expect(writeFile(join(mountPoint, 'probe'), 'x')).rejects.toMatchObject({ code: 'EROFS' });

    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await observeAfterFlip(token(), 100 + i));
    answers.push(await bounded('GET', `/v1/agents/${agentId}`));
    answers.push(await bounded('POST', `/v1/agents/${agentId}/threads`, {}));
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(503);
      expect(answer.body).toMatchObject({ code: 'service_unavailable', error: expect.stringContaining(join(dataDir, 'pgdata')) });
      expect(answer.body.error).toMatch(/read-only/);
    }
    // Answered too (from the key cache, or 503 once it needs the store).
    expect([200, 503]).toContain((await bounded('GET', '/v1/session')).status);
    const live = await bounded('GET', '/healthz');
    expect(live.status).toBe(200);
    const ready = await bounded('GET', '/readyz');
    expect(ready.status, ready.text).toBe(503);
    expect(server!.child.exitCode).toBeNull();

    // SIGTERM ends it (PGlite is not closed: its shutdown checkpoint would spin the same way).
    const stopped = await Promise.race([server!.stop(), new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000))]);
    expect(stopped, server!.output()).not.toBe('hung');
  }, 180_000);

  it('after repair and a restart, keeps every acknowledged observation, learned exactly once, with the ledger exact', async () => {
    expect(acknowledged.size).toBeGreaterThan(0);
    if (server && server.child.exitCode === null && server.child.signalCode === null) await server.stop('SIGKILL');
    unmountStorage();
    // e2fsck exits 1 when it corrected errors (the error the trigger recorded).
    const check = spawnSync('e2fsck', ['-fy', loop], { encoding: 'utf8' });
    expect([0, 1], check.stdout + check.stderr).toContain(check.status);
    mountStorage();

    server = await startServerProcess({ dataDir });
    api = client(server.url, apiKey);
    // The one whose learning the failure interrupted is resumed; every one ends committed.
    for (const observationId of observationIds) await committed(observationId);
    const recalled = await api.post(`/v1/agents/${agentId}/recall`, { query: [...acknowledged].join(' ') });
    expect(recalled.status, recalled.text).toBe(200);
    const seen = countTokens([recalled.body.memory_context as string]);
    for (const tok of acknowledged) expect(seen.get(tok), tok).toBe(1);
    for (const [tok, count] of seen) expect(count, tok).toBe(1);

    const learnedWords = [...seen.keys()].filter((tok) => sent.has(tok)).length * 9;
    const { balance, entries } = await readLedger(api);
    const total = entries.reduce((sum, entry) => sum + Math.round(Number(entry.cost) * 1e6), 0);
    expect(Math.round(Number(balance) * 1e6)).toBe(-total);
    const chargedWords = entries.filter((entry) => entry.route === 'observe').reduce((sum, entry) => sum + (entry.in_words ?? 0), 0);
    expect(chargedWords).toBe(learnedWords);
  }, 180_000);
});
