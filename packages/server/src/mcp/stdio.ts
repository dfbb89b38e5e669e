import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createClient } from '@memory-agents/client';
import { createMemoryMcpServer } from './memory-mcp-server.js';

/** Options of `runMcpStdio` (the `memory-agents mcp` command). */
export type McpStdioOptions = {
  /** A running memory-agents server, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** An API key of the organization (from the environment, never a flag). */
  apiKey: string;
  agentId: string;
  endUser?: string;
  threadId?: string;
  version: string;
};

/**
 * Serves the memory tools over stdio to one desktop MCP client, talking to a running server over
 * `/v1` with the typed client. stdout carries the protocol only; resolves when the client hangs up.
 */
export async function runMcpStdio(options: McpStdioOptions): Promise<void> {
  const client = createClient({ baseUrl: options.url, apiKey: options.apiKey, ...(options.endUser === undefined ? {} : { endUser: options.endUser }) });
  const server = createMemoryMcpServer({
    client,
    version: options.version,
    agentId: options.agentId,
    allowUpload: true,
    publicUrl: options.url,
    ...(options.threadId === undefined ? {} : { threadId: options.threadId }),
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  // Requests not answered yet, so a client that closes its end right after its last request still
  // gets the replies: when the input ends, the answers already being worked on are sent, then it stops.
  const pending = new Set<string | number>();
  let settled: (() => void) | null = null;
  const receive = transport.onmessage!;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && 'id' in message) pending.add(message.id);
    receive(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    await send(message);
    if (!('method' in message) && 'id' in message && message.id !== undefined && pending.delete(message.id) && pending.size === 0) settled?.();
  };
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => {
      if (pending.size === 0) resolve();
      else settled = resolve;
    });
  });
  process.stderr.write(`memory-agents mcp: agent ${options.agentId} on ${options.url}, serving MCP over stdio\n`);
  await closed;
  await server.close().catch(() => undefined);
}
