import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { asPerson, ask, newThread, observeAndSettle, said, threadPaths } from '../learning/learning-support.js';

/**
 * The embedded default (`memory-agents serve`: PGlite state + LanceDB index + disk blobs in one data
 * dir) keeps every memory searchable across a graceful restart, for several agents.
 */
const AGENTS = 3;
const FACTS = 8;
const servers: ServerProcess[] = [];

afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL');
  if (servers[0]) await removeDataDir(servers[0].dataDir);
});

/** A made-up word per (agent, fact): no two facts share it, so one chat query names one fact. */
function codeword(agent: number, fact: number): string {
  const syllables = ['ka', 'zu', 'mi', 'ro', 've', 'tan', 'lo', 'pex', 'dri', 'sul'];
  return `${syllables[agent % 10]}${syllables[(fact * 3 + 1) % 10]}${syllables[(fact * 7 + agent + 2) % 10]}${fact}`;
}

const factText = (agent: number, fact: number) => `The ${codeword(agent, fact)} crate is stored on shelf ${10 + fact} of warehouse ${agent + 1}.`;

type Learned = { agentId: string; facts: string[] };

/** Asks about each fact in a fresh thread (one person per agent, under the chat rate window). */
async function findEvery(api: Client, learned: Learned[], label: string): Promise<void> {
  for (const [agent, { agentId, facts }] of learned.entries()) {
    const person = asPerson(api, `${label}-reader-${agent}`);
    const threadId = await newThread(person, agentId);
    for (const [fact, text] of facts.entries()) {
      const response = await person.post(threadPaths(agentId, threadId).chat, ask(`Where is the ${codeword(agent, fact)} crate stored?`));
      expect(response.status, response.text).toBe(200);
      expect(response.body.memory_context, `${label}: agent ${agent + 1}, fact ${fact + 1}`).toContain(text);
      // Scoped per agent: no other agent's fact comes back.
      for (const [otherAgent, other] of learned.entries()) {
        if (otherAgent !== agent) for (const otherText of other.facts) expect(response.body.memory_context).not.toContain(otherText);
      }
    }
  }
}

describe('memory index: the embedded default across restarts', () => {
  it('finds every memory of several agents by chat after a graceful restart on the same data dir', { timeout: 240_000 }, async () => {
    const first = await startServerProcess();
    servers.push(first);
    const api = client(first.url, first.key);
    const learned: Learned[] = [];
    for (let agent = 0; agent < AGENTS; agent++) {
      const agentId = (await readyAgent(api)).agent_id;
      const facts = Array.from({ length: FACTS }, (_, fact) => factText(agent, fact));
      const threadId = await newThread(asPerson(api, `writer-${agent}`), agentId);
      const status = await observeAndSettle(api, agentId, threadId, facts.map((text) => said(text, { speaker: 'Maya' })));
      expect(status.status).toBe('committed');
      learned.push({ agentId, facts });
    }
    await findEvery(api, learned, 'before');

    // Graceful stop (SIGTERM): exits 0 once the index's background work is done.
    expect(await first.stop()).toBe(0);
    const index = lancedbMemoryIndex({ uri: join(first.dataDir, 'lancedb') });
    await index.init();
    const counts = await Promise.all(learned.map(({ agentId }) => index.stats({ agentId })));
    await index.close();
    for (const count of counts) expect(count.count).toBeGreaterThanOrEqual(FACTS);

    const second = await startServerProcess({ dataDir: first.dataDir });
    servers.push(second);
    expect(second.key).toBeNull();
    const again = client(second.url, first.key);
    await findEvery(again, learned, 'after');

    // The restarted server learns on top of what it had, and finds old and new alike.
    const [firstAgent] = learned;
    const extra = 'The late pexpexpex crate is stored in the basement of warehouse 1.';
    const status = await observeAndSettle(again, firstAgent!.agentId, await newThread(asPerson(again, 'writer-late'), firstAgent!.agentId), [said(extra, { speaker: 'Maya' })]);
    expect(status.status).toBe('committed');
    const reader = asPerson(again, 'late-reader');
    const threadId = await newThread(reader, firstAgent!.agentId);
    const late = await reader.post(threadPaths(firstAgent!.agentId, threadId).chat, ask('Where is the late pexpexpex crate stored?'));
    expect(late.body.memory_context).toContain(extra);
    const old = await reader.post(threadPaths(firstAgent!.agentId, threadId).chat, ask(`Where is the ${codeword(0, 0)} crate stored?`));
    expect(old.body.memory_context).toContain(firstAgent!.facts[0]);
    expect(await second.stop()).toBe(0);

    // Nothing was lost or duplicated by the restart: same counts, plus the one late memory.
    const reopened = lancedbMemoryIndex({ uri: join(first.dataDir, 'lancedb') });
    await reopened.init();
    try {
      for (const [agent, { agentId }] of learned.entries()) {
        const expected = counts[agent]!.count + (agent === 0 ? 1 : 0);
        expect((await reopened.stats({ agentId })).count).toBe(expected);
      }
    } finally {
      await reopened.close();
    }
  });
});
