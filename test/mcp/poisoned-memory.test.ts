// The poisoned-memory suite (issue 33) on the MCP tools: what `recall` and `ask` hand to the MCP
// client's model (the tool text, as one user message) over Streamable HTTP against the built CLI.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createClient } from '@memory-agents/client';
import { describePoisonedMemoryConformance, POISONED_MEMORY_SECRET, type PoisonedMemoryTarget } from '@memory-agents/core/testing';
import { removeDataDir, runCli, startServerProcess } from '../support/server.js';

async function mcpTarget(tool: 'recall' | 'ask'): Promise<PoisonedMemoryTarget> {
  const server = await startServerProcess();
  // An organization whose uploads are not rate-limited to one per 10 s: the suite stores 6 documents.
  const json = async (...args: string[]) => JSON.parse((await runCli([...args, '--data', server.dataDir, '--json'])).stdout);
  const org = await json('orgs', 'create', '--name', 'poisoned');
  await json('orgs', 'limits', '--org', org.organization_id, '--limits', JSON.stringify({ rateLimits: { observe_file: { subject: { limit: 100, windowSeconds: 10 }, organization: { limit: 100, windowSeconds: 10 } } } }));
  const key: string = (await json('keys', 'create', '--org', org.organization_id)).key;
  const api = createClient({ baseUrl: server.url, apiKey: key });
  const created = await api.agents.create({ agent_config: { role: `assistant (code ${POISONED_MEMORY_SECRET})`, objective: 'remember what users say' } });
  const agentId = (await api.agents.waitUntilReady({ agentId: created.agent_id, timeoutMs: 60_000 })).agent_id;
  const threadId = (await api.threads.create({ agentId, title: 'poisoned' })).thread_id;
  const mcp = new Client({ name: 'vitest-poisoned', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?agent=${agentId}`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  const busy = { retries: { max: 60, maxDelayMs: 1_000 } };
  return {
    extractive: tool === 'ask',
    // `ask` returns the answer (the chat path, whose prompts core's suite checks), quoting some memories.
    showsRecalledMemory: tool === 'recall',
    async learn({ turns, documents }) {
      const accepted = await api.threads.observe({ agentId, threadId, observations: turns.map((text) => ({ content: [{ type: 'text' as const, text }] })), ...busy });
      await api.waitForObservation({ agentId, threadId, observationId: accepted.observation_id, timeoutMs: 60_000 });
      for (const document of documents) {
        const upload = await api.threads.observeFile({ agentId, threadId, file: new TextEncoder().encode(document.text), filename: document.filename, mediaType: 'text/plain', ...busy });
        await api.waitForObservation({ agentId, threadId, observationId: upload.observation_id, timeoutMs: 60_000 });
      }
    },
    async ask(question) {
      const result = (await mcp.callTool({ name: tool, arguments: tool === 'recall' ? { query: question } : { question } })) as CallToolResult;
      if (result.isError) throw new Error(`MCP ${tool} failed: ${JSON.stringify(result.content)}`);
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      const answer = tool === 'ask' ? (result.structuredContent as { answer: string }).answer : null;
      return { prompts: [[{ role: 'user', content: text }]], answer };
    },
    async cleanup() {
      await mcp.close();
      await server.stop();
      await removeDataDir(server.dataDir);
    },
  };
}

describePoisonedMemoryConformance({ name: 'MCP recall', create: () => mcpTarget('recall') });
describePoisonedMemoryConformance({ name: 'MCP ask', create: () => mcpTarget('ask') });
