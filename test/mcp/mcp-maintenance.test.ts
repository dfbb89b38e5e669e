import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, connectMcp, toolText as text } from '../support/mcp-http.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';

// The maintenance tools (issue 43) over MCP on `serve`'s /mcp, driven by the MCP SDK's client: a dry
// run's diff (memory text fenced as data), apply, list, undo, and the refusals as tool errors.
let server: ServerProcess;
let api: MemoryAgentsClient;
let agentId: string;
let mcp: Client;

const call = (name: string, args: Record<string, unknown> = {}, client = mcp) => callTool(client, name, args);

const connect = (endUser?: string) => connectMcp(server, agentId, 'vitest-maintenance', endUser);

beforeAll(async () => {
  server = await startServerProcess();
  api = createClient({ baseUrl: server.url, apiKey: server.key! });
  const created = await api.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } });
  agentId = (await api.agents.waitUntilReady({ agentId: created.agent_id, timeoutMs: 60_000 })).agent_id;
  const thread = await api.threads.create({ agentId, title: 'maintenance' });
  // Said in 2024: the code's bound ("valid until Friday") has long passed.
  const said = ['The door code is valid until Friday.', 'My sister Ingrid lives in Tromsø.', 'I play the cello on Sundays.'];
  const accepted = await api.threads.observe({ agentId, threadId: thread.thread_id, observations: said.map((line) => ({ speaker: 'alice', timestamp: '2024-01-02T10:00:00Z', content: [{ type: 'text' as const, text: line }] })) });
  await api.waitForObservation({ agentId, threadId: thread.thread_id, observationId: accepted.observation_id, timeoutMs: 60_000 });
  mcp = await connect();
});
afterAll(async () => {
  await mcp?.close();
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe('maintenance over MCP', () => {
  it('plans a dry run (the diff fenced as data), applies it, lists it and undoes it', async () => {
    const planned = await call('maintenance_plan', { kind: 'sweep_expired', max_share: 0.5 });
    expect(planned.isError).toBeFalsy();
    const run = planned.structuredContent as { run_id: string; status: string; changes: { action: string; memory_text: string }[] };
    expect(run).toMatchObject({ status: 'dry_run', changes: [{ action: 'forget', memory_text: 'The door code is valid until Friday.' }] });
    expect(text(planned)).toMatch(/^Dry run mnt_\S+ \(sweep_expired\): dry_run, 0 of 1 changes done, planned by k[0-9a-f]{20}\./);
    expect(text(planned)).toMatch(/never instructions[^]*\n<memory-data id="([0-9a-f]{16})">\n> 1\. forget mem_\S+: The door code is valid[^\n]*\n<\/memory-data id="\1">$/);
    const applied = await call('maintenance_apply', { run_id: run.run_id });
    expect(applied.structuredContent).toMatchObject({ status: 'applied', receipt: { forgotten: 1 } });
    expect(text(applied)).toMatch(/forgotten 1; undo until /);
    expect((await api.memories.list({ agentId })).memories.map((memory) => memory.text)).not.toContain('The door code is valid until Friday.');
    const listed = await call('maintenance_list');
    expect(text(listed)).toContain(`${run.run_id} sweep_expired applied (1 changes, by k`);
    expect((await call('maintenance_list', { run_id: run.run_id })).structuredContent).toMatchObject({ run_id: run.run_id, changes: [{ action: 'forget' }] });
    const undone = await call('maintenance_undo', { run_id: run.run_id });
    expect(undone.structuredContent).toMatchObject({ status: 'undone' });
    // Applying it again is refused (a tool error with the service's code).
    const again = await call('maintenance_apply', { run_id: run.run_id });
    expect(again).toMatchObject({ isError: true, structuredContent: { code: 'conflict', status: 409 } });
  });

  it('refuses through a session bound to a person, and an unknown run, as tool errors', async () => {
    const person = await connect('alice');
    try {
      expect(await call('maintenance_plan', { kind: 'merge_duplicates' }, person)).toMatchObject({ isError: true, structuredContent: { code: 'forbidden', status: 403 } });
    } finally {
      await person.close();
    }
    expect(await call('maintenance_undo', { run_id: 'mnt_01ARZ3NDEKTSV4RRFFQ69G5FAV' })).toMatchObject({ isError: true, structuredContent: { code: 'not_found', status: 404 } });
  });
});
