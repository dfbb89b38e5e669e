import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { filler, newThread, pollResumed, pollStatus, said, threadPaths } from './learning-support.js';

const TURNS = 100;
const CHARS = 25_000;
/** Turns of CHARS characters in one batch (ingestion batches at most 256,000 characters). */
const BATCH_TURNS = Math.floor(256_000 / CHARS);
const servers: ServerProcess[] = [];

afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL');
  if (servers[0]) await removeDataDir(servers[0].dataDir);
});

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('observation jobs across a crash', () => {
  // Bounded generously: on a loaded 2-core machine learning 2.5 MB across a restart takes a while.
  it('resume by themselves after SIGKILL: committed once, resumed_at set, every turn learned exactly once', { timeout: 600_000 }, async () => {
    const first = await startServerProcess();
    servers.push(first);
    const api = client(first.url, first.key);
    const agentId = (await readyAgent(api)).agent_id;
    const threadId = await newThread(api, agentId);
    const paths = threadPaths(agentId, threadId);
    const texts = Array.from({ length: TURNS }, (_, i) => `Turn ${i + 1}. ${filler(CHARS - 10, i)}`.slice(0, CHARS));
    const accepted = await api.post(paths.observe, { observations: texts.map((text) => said(text)) });
    expect(accepted.status).toBe(202);
    const observationId: string = accepted.body.observation_id;

    // Kill while the job is part-way: several batches done, more to read.
    const midway = await pollStatus(api, paths.status(observationId), (status) => status.turns_processed >= 2 * BATCH_TURNS || status.status !== 'processing' && status.status !== 'queued', { tries: 5_000 });
    expect(midway.status).toBe('processing');
    expect(midway.turns_processed).toBeLessThan(TURNS);
    const killedAt = Date.now();
    expect(await first.stop('SIGKILL')).toBeNull();

    const second = await startServerProcess({ dataDir: first.dataDir });
    servers.push(second);
    const restartedAt = Date.now();
    const again = client(second.url, first.key);
    const paused = (await again.get(paths.status(observationId))).body;
    expect(paused).toMatchObject({ turns_total: TURNS, learning: null });
    expect(['processing', 'interrupted']).toContain(paused.status);
    expect(paused.turns_processed).toBeGreaterThanOrEqual(midway.turns_processed);

    // Nobody sends anything: the new process resumes the job once the dead worker's lease lapses.
    const done = await pollResumed(again, paths.status(observationId), [first, second]);
    expect(done).toMatchObject({ status: 'committed', turns_total: TURNS, turns_processed: TURNS, queue_depth: 0, error: null, learning: null });
    expect(done.resumed_at).not.toBeNull();
    expect(Date.parse(done.resumed_at)).toBeGreaterThanOrEqual(killedAt);
    // The agent learns again afterwards.
    const next = await again.post(paths.observe, { observations: [said('after the crash')] });
    expect(next.status).toBe(202);
    await pollStatus(again, paths.status(next.body.observation_id));
    await second.stop();

    // Every turn's memories are in the index exactly once, with deterministic ids
    // mem_<job>_<turn>_<piece>; turns committed before the crash were not written again.
    const index = lancedbMemoryIndex({ uri: join(first.dataDir, 'lancedb') });
    await index.init();
    try {
      const job = observationId.slice(4);
      let total = 0;
      let before = 0;
      let after = 0;
      for (let turn = 0; turn < TURNS; turn++) {
        const ids = Array.from({ length: 120 }, (_, piece) => `mem_${job}_${turn}_${piece}`);
        const records = await index.get({ agentId, ids });
        const pieces = records.map((record) => Number(record.id.split('_').at(-1))).sort((a, b) => a - b);
        expect(pieces, `turn ${turn + 1}`).toEqual(pieces.map((_, i) => i));
        expect(pieces.length).toBeGreaterThan(1);
        expect(pieces.length).toBeLessThan(120);
        records.sort((a, b) => Number(a.id.split('_').at(-1)) - Number(b.id.split('_').at(-1)));
        expect(normalize(records.map((record) => record.text).join(' '))).toBe(normalize(texts[turn]!));
        for (const record of records) expect(record.source).toEqual({ kind: 'turn', threadId, observationId, turnIndex: turn });
        // A turn's memories are written together, on one side of the crash.
        const at = Date.parse(records[0]!.createdAt);
        for (const record of records) expect(Date.parse(record.createdAt) < killedAt).toBe(at < killedAt);
        // Turns well before the reported progress were committed before the kill and kept.
        if (turn < midway.turns_processed - BATCH_TURNS) expect(at).toBeLessThan(killedAt);
        if (at < killedAt) before++;
        if (at >= restartedAt) after++;
        total += records.length;
      }
      expect(before).toBeGreaterThan(0);
      expect(after).toBeGreaterThan(0);
      // Nothing else: the one-turn job after the crash adds exactly one memory.
      expect((await index.stats({ agentId })).count).toBe(total + 1);
    } finally {
      await index.close();
    }
  });
});
