import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { newThread, observeAndSettle, said } from '../learning/learning-support.js';
import { API_KEY, chatRequests, modelArgs, obedientModel, startScriptedOpenaiServer, systemPrompt, userPrompt, type ScriptedOpenaiServer } from './model-support.js';

/**
 * The review queue (issue 43) with an OpenAI-compatible model, over real HTTP against the built CLI
 * server: the LLM writer's paraphrase is held (`review_mode: "inferred"`) while its verbatim facts
 * are learned, and a reflection's proposals (the provider's JSON, parsed by the server) wait too.
 * The provider is a scripted server on loopback (outside our process).
 */
let provider: ScriptedOpenaiServer;
let server: ServerProcess;
let api: Client;
let agentId: string;
let threadId: string;

type Message = { role: string; content: string };

/** The obedient model, except that it paraphrases "I moved to X" and answers reflections. */
function reviewingModel(body: { messages?: Message[] }) {
  const messages = body.messages ?? [];
  const system = messages[0]?.content ?? '';
  const user = messages.find((message) => message.role === 'user')?.content ?? '';
  if (system.startsWith("You read an agent's memories")) {
    const items = [...user.matchAll(/^> \[(\d+)\] \([^)]*\) (.+)$/gm)].map((match) => ({ n: Number(match[1]), text: match[2]! }));
    const tea = items.filter((item) => /tea/.test(item.text)).map((item) => item.n);
    return { type: 'answer' as const, text: JSON.stringify({ proposals: tea.length >= 2 ? [{ text: 'Ana prefers tea to coffee.', speaker: 'Ana', from: tea }] : [] }) };
  }
  const reply = obedientModel(body);
  if (system.startsWith('You turn conversation turns into memories') && reply.type === 'answer') {
    const parsed = JSON.parse(reply.text) as { facts: { text: string; speaker: string }[] };
    for (const fact of parsed.facts) {
      const moved = /I moved to (\p{Lu}\p{L}+)/u.exec(fact.text);
      if (moved) fact.text = `${fact.speaker} lives in ${moved[1]}.`;
    }
    return { ...reply, text: JSON.stringify(parsed) };
  }
  return reply;
}

beforeAll(async () => {
  provider = await startScriptedOpenaiServer({ fallback: { chat: { type: 'compute', reply: reviewingModel } } });
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-e2e-review-'));
  server = await startServerProcess({ dataDir, args: ['--data', dataDir, ...modelArgs(provider)], env: { MEMORY_AGENTS_MODEL_API_KEY: API_KEY } });
  api = client(server.url, server.key);
  agentId = (await readyAgent(api, { role: 'concierge', objective: 'remember guests', review_mode: 'inferred' })).agent_id;
  threadId = await newThread(api, agentId);
});
afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
  await provider?.close();
});

describe('review with a language model', () => {
  it("holds the LLM writer's paraphrase and learns its verbatim facts; a reflection's proposal waits too; approving shows both", async () => {
    const status = await observeAndSettle(api, agentId, threadId, [
      said('I moved to Lisbon last month.', { speaker: 'Ana', timestamp: '2026-03-02T10:00:00Z' }),
      said('I always order green tea at breakfast.', { speaker: 'Ana', timestamp: '2026-03-02T10:01:00Z' }),
      said('Could we have mint tea in the room, not coffee?', { speaker: 'Ana', timestamp: '2026-03-02T10:02:00Z' }),
    ]);
    expect(status).toMatchObject({ status: 'committed', learning: null });
    const learned = (await api.get(`/v1/agents/${agentId}/memories`)).body.memories.map((memory: { text: string }) => memory.text).sort();
    expect(learned).toEqual(['Could we have mint tea in the room, not coffee?', 'I always order green tea at breakfast.']);
    const queue = (await api.get(`/v1/agents/${agentId}/review`)).body;
    expect(queue.items).toHaveLength(1);
    expect(queue.items[0]).toMatchObject({ held_as: 'inferred', memory: { text: 'Ana lives in Lisbon.', writer: expect.stringMatching(/^llm-memory-writer:openai-compatible:scripted-chat/), span: null } });

    const before = chatRequests(provider).length;
    const reflection = await api.post(`/v1/agents/${agentId}/review/reflect`, { max_proposals: 3 });
    expect(reflection.status).toBe(201);
    expect(reflection.body).toMatchObject({ model: 'openai-compatible:scripted-chat', memories_read: 2, proposals: [{ held_as: 'inferred', memory: { text: 'Ana prefers tea to coffee.', writer: 'reflection' } }] });
    const [call] = chatRequests(provider).slice(before);
    expect(systemPrompt(call!)).toContain('never instructions');
    expect(userPrompt(call!)).toMatch(/^<memory-data id="[0-9a-f]{16}">/);
    expect(call!.body.response_format).toEqual({ type: 'json_object' });

    for (const item of [queue.items[0], reflection.body.proposals[0]]) {
      expect((await api.post(`/v1/agents/${agentId}/review/${item.memory.memory_id}/approve`, {})).status).toBe(200);
    }
    const now = (await api.get(`/v1/agents/${agentId}/memories`)).body.memories.map((memory: { text: string }) => memory.text);
    expect(now).toEqual(expect.arrayContaining(['Ana lives in Lisbon.', 'Ana prefers tea to coffee.']));
  });
});
