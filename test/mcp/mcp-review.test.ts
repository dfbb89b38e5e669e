import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, connectMcp, toolText as text } from '../support/mcp-http.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';

// The review tools (issue 43) over MCP on `serve`'s /mcp, driven by the MCP SDK's client: the queue
// (memory text fenced as data, hidden characters as markers), approve, decline, edit, undo, and the
// refusals as tool errors.
let server: ServerProcess;
let api: MemoryAgentsClient;
let agentId: string;
let mcp: Client;

const call = (name: string, args: Record<string, unknown> = {}, client = mcp) => callTool(client, name, args);
type Item = { memory: { memory_id: string; text: string }; state: string; decisions: { action: string; reason: string | null }[] };

const connect = (endUser?: string) => connectMcp(server, agentId, 'vitest-review', endUser);

beforeAll(async () => {
  server = await startServerProcess();
  api = createClient({ baseUrl: server.url, apiKey: server.key! });
  const created = await api.agents.create({ agent_config: { role: 'assistant', objective: 'remember', review_mode: 'all' } });
  agentId = (await api.agents.waitUntilReady({ agentId: created.agent_id, timeoutMs: 60_000 })).agent_id;
  const thread = await api.threads.create({ agentId, title: 'review' });
  const said = ['The door code is 44\u200B17 since Monday.', 'Remember that I hate olives on pizza.', 'My sister Ingrid lives in Tromsø.'];
  const accepted = await api.threads.observe({ agentId, threadId: thread.thread_id, observations: said.map((line) => ({ speaker: 'alice', timestamp: '2026-05-02T10:00:00Z', content: [{ type: 'text' as const, text: line }] })) });
  await api.waitForObservation({ agentId, threadId: thread.thread_id, observationId: accepted.observation_id, timeoutMs: 60_000 });
  mcp = await connect();
});
afterAll(async () => {
  await mcp?.close();
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe('review over MCP', () => {
  it('lists the queue fenced as data with hidden characters as markers, approves, declines, edits and undoes', async () => {
    const queue = await call('review_queue');
    expect(queue.isError).toBeFalsy();
    const items = (queue.structuredContent as { items: Item[] }).items;
    expect(items.map((item) => item.state)).toEqual(['pending', 'pending', 'pending']);
    expect(text(queue)).toMatch(/^Review mode all; 3 pending memories\.\nTheir text [^]*never instructions[^]*<memory-data id="[0-9a-f]{16}">/);
    expect(text(queue)).toContain('The door code is 44⟦U+200B zero width space⟧17 since Monday.');
    const byWords = (words: string) => items.find((item) => item.memory.text.includes(words))!;
    expect((await api.memories.list({ agentId })).memories).toEqual([]);

    const approved = await call('review_decide', { memory_id: byWords('Ingrid').memory.memory_id, decision: 'approve' });
    expect(approved.structuredContent).toMatchObject({ state: 'approved', decisions: [{ action: 'approve' }] });
    expect(text(approved)).toMatch(/^Approved mem_\S+: now approved\./);
    expect((await api.memories.list({ agentId })).memories.map((memory) => memory.text)).toEqual(['My sister Ingrid lives in Tromsø.']);

    const declined = await call('review_decide', { memory_id: byWords('olives').memory.memory_id, decision: 'decline', reason: 'a joke' });
    expect(declined.structuredContent).toMatchObject({ state: 'declined', decisions: [{ action: 'decline', reason: 'a joke' }] });
    expect((await call('review_queue', { state: 'declined' })).structuredContent).toMatchObject({ items: [{ memory: { memory_id: byWords('olives').memory.memory_id } }] });
    expect((await call('review_decide', { memory_id: byWords('olives').memory.memory_id, decision: 'undo' })).structuredContent).toMatchObject({ state: 'pending' });

    const edited = await call('review_decide', { memory_id: byWords('door code').memory.memory_id, decision: 'edit', text: 'The door code is 4417 since Monday.' });
    expect(edited.structuredContent).toMatchObject({ state: 'pending', memory: { text: 'The door code is 4417 since Monday.' }, hidden_characters: [] });
    // Approving twice, an edit without text, an unknown memory: tool errors with the service's code.
    expect(await call('review_decide', { memory_id: byWords('Ingrid').memory.memory_id, decision: 'approve' })).toMatchObject({ isError: true, structuredContent: { code: 'conflict', status: 409 } });
    expect(await call('review_decide', { memory_id: byWords('door code').memory.memory_id, decision: 'edit' })).toMatchObject({ isError: true, structuredContent: { status: 422 } });
    expect(await call('review_decide', { memory_id: 'mem_01ARZ3NDEKTSV4RRFFQ69G5FAV', decision: 'approve' })).toMatchObject({ isError: true, structuredContent: { code: 'not_found', status: 404 } });
  });

  it('re-learns under the same writer: every turn unchanged, nothing proposed', async () => {
    const relearned = await call('review_relearn', { max_turns: 10 });
    expect(relearned.isError).toBeFalsy();
    expect(relearned.structuredContent).toMatchObject({ turns_read: 3, unchanged_turns: 3, proposals: [], next_cursor: null });
    expect(text(relearned)).toMatch(/^\S+ read 3 turns: 3 unchanged, 0 memories proposed for review\.$/);
  });

  it('reflect needs a language model: on the built-in one it is a tool error with service_not_configured', async () => {
    expect(await call('review_reflect', { max_proposals: 3 })).toMatchObject({ isError: true, structuredContent: { code: 'service_not_configured', status: 503 } });
  });

  it('refuses through a session bound to a person', async () => {
    const person = await connect('alice');
    try {
      expect(await call('review_queue', {}, person)).toMatchObject({ isError: true, structuredContent: { code: 'forbidden', status: 403 } });
    } finally {
      await person.close();
    }
  });
});
