import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testPrerequisite } from '@memory-agents/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, readyAgent, type Client } from '../support/client.js';
import { startServerProcess, type ServerProcess } from '../support/server.js';

/**
 * The embedded default on a data dir whose disk fills up: a small tmpfs (mounting needs root; the
 * test is skipped with a line saying so otherwise). Writes answer 503 with a sentence while the
 * disk is full, the process keeps serving, nothing acknowledged is lost (also across a restart),
 * and writes work again once space is freed, without a restart.
 */
let mountPoint = '';
let mounted = false;
let reason = 'mounting a small tmpfs needs root on Linux';
try {
  if (process.getuid?.() === 0 && process.platform === 'linux') {
    mountPoint = await mkdtemp(join(tmpdir(), 'ma-full-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=160m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    mounted = true;
  }
} catch (error) {
  mounted = false;
  reason = `could not mount a tmpfs: ${(error as Error).message.split('\n')[0]}`;
}
// Under CI=true a missing prerequisite fails (CI runs as root): the guarantee is checked.
testPrerequisite(mounted, 'a full data dir', reason);

const said = (text: string) => ({ observations: [{ speaker: 'ana', content: [{ type: 'text', text }] }] });

describe.runIf(mounted)('the embedded default on a full disk', () => {
  let server: ServerProcess | null = null;
  const dataDir = join(mountPoint, 'data');
  const filler = join(mountPoint, 'filler');

  beforeAll(async () => {
    server = await startServerProcess({ dataDir });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    execFileSync('umount', [mountPoint], { stdio: 'ignore' });
    await rm(mountPoint, { recursive: true, force: true });
  }, 60_000);

  /** Writes zeros into `filler` until the disk refuses (ENOSPC). */
  async function fillDisk(): Promise<void> {
    const file = await open(filler, 'w');
    const chunk = Buffer.alloc(1024 * 1024);
    try {
      for (;;) await file.write(chunk);
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      await file.close().catch(() => undefined);
    }
  }

  it('answers 503 with a sentence while full, keeps what it acknowledged, and writes again once space is freed', async () => {
    const key = server!.key!;
    const api: Client = client(server!.url, key);
    const agent = await readyAgent(api);
    const thread = (await api.post(`/v1/agents/${agent.agent_id}/threads`, {})).body.thread_id as string;
    const base = `/v1/agents/${agent.agent_id}/threads/${thread}`;
    const committed = (id: string) => eventually(async () => (await api.get(`${base}/observe/${id}/status`)).body?.status === 'committed', `${id} committed`, 30_000);
    const before = await api.post(`${base}/observe`, said('The harbour crane was painted orange before the disk filled.'));
    expect(before.status).toBe(202);
    await committed(before.body.observation_id);

    await fillDisk();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await api.post(`${base}/observe`, said(`During the full disk, note ${i}: ${randomBytes(3000).toString('base64')}`)));
    answers.push(await api.post(`/v1/agents/${agent.agent_id}/threads`, {}));
    for (const answer of answers) {
      // (429: the agent is still learning an observe that fit in the pages the disk had left.)
      expect([201, 202, 429, 503], answer.text).toContain(answer.status);
      if (answer.status === 503) expect(answer.body).toMatchObject({ code: 'service_unavailable', error: expect.stringMatching(/storage is full or read-only/) });
    }
    expect(answers.filter((answer) => answer.status === 503).length).toBeGreaterThan(0);
    expect(server!.child.exitCode).toBeNull();
    // What was acknowledged before stays readable while the disk is full.
    const recalled = await api.post(`/v1/agents/${agent.agent_id}/recall`, { query: 'harbour crane' });
    expect(recalled.status).toBe(200);
    expect(recalled.body.memory_context).toContain('orange');

    await rm(filler);
    const after = await eventually(async () => {
      const response = await api.post(`${base}/observe`, said('The ferry timetable changed after the disk was freed.'));
      return response.status === 202 ? response : null;
    }, 'a write accepted once space is freed', 20_000);
    await committed(after.body.observation_id);
    // Every observation accepted while the disk was full was learned too.
    for (const answer of answers) if (answer.status === 202) await committed(answer.body.observation_id);

    // Across a restart: nothing acknowledged is lost.
    await server!.stop();
    server = await startServerProcess({ dataDir });
    const reopened = client(server.url, key);
    const kept = await reopened.post(`/v1/agents/${agent.agent_id}/recall`, { query: 'harbour crane ferry timetable' });
    expect(kept.status).toBe(200);
    expect(kept.body.memory_context).toContain('orange');
    expect(kept.body.memory_context).toContain('ferry timetable');
  }, 120_000);
});
