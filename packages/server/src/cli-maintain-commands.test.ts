import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@memory-agents/core';
import { describe, expect, it } from 'vitest';
import { runMain as run } from './cli-test-support.js';
import { composeService } from './compose.js';


describe('memory-agents maintain <kind> (issue 43)', () => {
  it('prints the dry run, applies with --apply, refuses a missing --agent and an unknown agent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ma-maintain-'));
    try {
      const data = join(dir, 'data');
      const composed = await composeService({ dataDir: data }, silentLogger);
      await composed.service.start();
      const org = await composed.service.admin.createOrganization({ name: 'Acme' });
      const caller = await composed.service.as(org.organizationId);
      const agentId = (await composed.service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } })).agent_id;
      await composed.service.idle();
      const threadId = (await composed.service.threads.create({ caller, agentId, body: {} })).thread_id;
      const say = (text: string, expires_at?: string) => ({ speaker: 'ana', content: [{ type: 'text' as const, text }], ...(expires_at ? { expires_at } : {}) });
      await composed.service.observe({ caller, agentId, threadId, body: { observations: [say('The offsite is at the lake house.', '2020-01-01T00:00:00Z'), say('I live in Paris.')] } });
      await composed.service.idle();
      await composed.close();

      const dry = await run(['maintain', 'sweep_expired', '--agent', agentId, '--data', data, '--max-share', '0.5']);
      expect(dry).toMatchObject({ code: 0, stderr: '' });
      expect(dry.stdout).toMatch(/status=dry_run {2}changes=1 {2}guard=ok/);
      expect(dry.stdout).toContain('forget    mem_');
      expect(dry.stdout).toContain('"The offsite is at the lake house."');
      const applied = await run(['maintain', 'sweep_expired', '--agent', agentId, '--data', data, '--max-share', '0.5', '--apply', '--json']);
      expect(applied.code).toBe(0);
      expect(JSON.parse(applied.stdout)).toMatchObject({ status: 'applied', receipt: { forgotten: 1 } });
      expect((await run(['maintain', 'sweep_expired', '--agent', agentId, '--data', data])).stdout).toMatch(/changes=0/);
      expect(await run(['maintain', 'sweep_expired', '--data', data])).toMatchObject({ code: 2 });
      expect((await run(['maintain', 'merge_duplicates', '--agent', 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--data', data])).stderr).toContain('agent_not_found');

      // Re-learning under the writer that learned them: the turn still learned is unchanged, the one
      // whose memory the sweep forgot is not learned again; nothing proposed.
      const relearned = await run(['maintain', 'relearn', '--agent', agentId, '--data', data]);
      expect(relearned).toMatchObject({ code: 0, stderr: '' });
      expect(relearned.stdout).toMatch(/^writer=\S+ {2}turns=2 {2}unchanged=1 {2}proposed=0\n$/);
      expect(JSON.parse((await run(['maintain', 'relearn', '--agent', agentId, '--thread', threadId, '--data', data, '--json'])).stdout)).toMatchObject({ turns_read: 2, unchanged_turns: 1, proposals: [] });
      expect((await run(['maintain', 'relearn', '--agent', agentId, '--thread', 'thread_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--data', data])).stderr).toContain('thread_not_found');
      expect(await run(['maintain', 'relearn', '--data', data])).toMatchObject({ code: 2 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
