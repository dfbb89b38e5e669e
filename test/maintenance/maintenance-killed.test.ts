import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';

/**
 * Issue 43: a real server (the built CLI `serve`, embedded data dir) killed with SIGKILL while it
 * applies a maintenance run. EXPIRING memories said in 2024 with a bound long passed ("valid until
 * Friday") and as many without one; a `sweep_expired` run forgets the first half. The kill lands
 * once the run is seen `applying` (or, on a fast machine, after it finished: the checks hold
 * either way). After a restart: the run is `applied` with every change done, exactly the expiring
 * memories are gone from current memory, the organization was charged once, and undo gives back
 * every memory (nothing lost).
 */
const EXPIRING = 400;
/** Generous: learning 2 x EXPIRING turns and two server starts on a busy machine (not a timing assertion). */
const TIMEOUT_MS = 300_000;

let server: ServerProcess | undefined;
let dataDir = '';

const json = async (...args: string[]) => JSON.parse((await runCli([...args, '--data', dataDir, '--json'])).stdout);

/** The texts of the agent's memories (expired ones included, for audit), all pages; `forgotten`: only those forgotten (by `reason`), else only those not. */
async function memoryTexts(api: MemoryAgentsClient, agentId: string, forgotten?: string): Promise<string[]> {
  const texts: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await api.memories.list({ agentId, limit: 100, include_expired: true, ...(cursor === null ? {} : { cursor }) });
    texts.push(...page.memories.filter((memory) => (forgotten === undefined ? memory.forgotten === null : memory.forgotten?.reason === forgotten)).map((memory) => memory.text));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return texts;
}

beforeAll(async () => {
  server = await startServerProcess();
  dataDir = server.dataDir;
}, TIMEOUT_MS);
afterAll(async () => {
  await server?.stop();
  await removeDataDir(dataDir);
});

describe('a server killed while applying a maintenance run', () => {
  it('finishes the run on restart: nothing lost, nothing applied or charged twice', async () => {
    const org = await json('orgs', 'create', '--name', 'Killed', '--credits', '100');
    const key = (await json('keys', 'create', '--org', org.organization_id)).key as string;
    let api = createClient({ baseUrl: server!.url, apiKey: key });
    const created = await api.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } });
    const agentId = (await api.agents.waitUntilReady({ agentId: created.agent_id, timeoutMs: 60_000 })).agent_id;
    const threadId = (await api.threads.create({ agentId, title: 'codes' })).thread_id;
    const expiring = Array.from({ length: EXPIRING }, (_, i) => `Guest pass ${i} expires on Friday.`);
    const kept = Array.from({ length: EXPIRING }, (_, i) => `Room ${i} has ${i % 5} windows facing the garden.`);
    const turns = [...expiring, ...kept];
    for (let start = 0; start < turns.length; start += 100) {
      const observations = turns.slice(start, start + 100).map((text) => ({ speaker: 'alice', timestamp: '2024-01-02T10:00:00Z', content: [{ type: 'text' as const, text }] }));
      const accepted = await api.threads.observe({ agentId, threadId, observations });
      expect(await api.waitForObservation({ agentId, threadId, observationId: accepted.observation_id, timeoutMs: 120_000 })).toMatchObject({ status: 'committed' });
    }
    expect((await memoryTexts(api, agentId)).sort()).toEqual([...turns].sort());
    const plan = await api.maintenance.plan({ agentId, kind: 'sweep_expired', max_share: 0.5 });
    expect(plan.changes.map((change) => change.memory_text).sort()).toEqual([...expiring].sort());

    // Apply, and SIGKILL the server as soon as the run is seen applying (or done).
    const applying = api.maintenance.apply({ agentId, runId: plan.run_id }).catch((error: unknown) => error);
    let seen = { status: 'dry_run', progress: { done: 0, total: EXPIRING } };
    while (seen.status === 'dry_run') seen = await api.maintenance.get({ agentId, runId: plan.run_id });
    await server!.stop('SIGKILL');
    await applying;
    console.info(`killed with the run seen ${seen.status} (${seen.progress.done} of ${seen.progress.total} done)`);

    server = await startServerProcess({ dataDir });
    api = createClient({ baseUrl: server.url, apiKey: key });
    const run = await api.maintenance.get({ agentId, runId: plan.run_id });
    expect(run).toMatchObject({ status: 'applied', progress: { done: EXPIRING, total: EXPIRING }, receipt: { forgotten: EXPIRING } });
    expect((await memoryTexts(api, agentId)).sort()).toEqual([...kept].sort());
    // Each expiring memory forgotten by the run, once (a mark per memory, nothing else forgotten).
    expect((await memoryTexts(api, agentId, `maintenance run ${plan.run_id} (sweep_expired)`)).sort()).toEqual([...expiring].sort());
    // Charged once (the reference of the run), whatever the kill interrupted.
    const billing = await api.billing.get({ limit: 100 });
    expect(billing.entries.filter((entry) => entry.route === 'maintenance')).toHaveLength(1);
    await expect(api.maintenance.apply({ agentId, runId: plan.run_id })).rejects.toMatchObject({ status: 409 });
    // Nothing lost: undo gives back every memory, once.
    expect(await api.maintenance.undo({ agentId, runId: plan.run_id })).toMatchObject({ status: 'undone' });
    expect((await memoryTexts(api, agentId)).sort()).toEqual([...turns].sort());
  }, TIMEOUT_MS);
});
