import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ServerProcess } from './server.js';

// What the MCP tests over `serve`'s /mcp share: a session opened with the server's first key (and a
// person, when given), one tool call, and a result's text.

/** An MCP client connected to `server`'s /mcp with its key, `agentId` as the session's agent, `endUser` as X-SP-End-User. */
export async function connectMcp(server: ServerProcess, agentId: string, name: string, endUser?: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const headers: Record<string, string> = { Authorization: `Bearer ${server.key!}`, ...(endUser ? { 'X-SP-End-User': endUser } : {}) };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?agent=${agentId}`), { requestInit: { headers } }));
  return client;
}

/** One tool call's result. */
export const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;

/** A tool result's text parts, joined. */
export const toolText = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
