import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MemoryAgentsError } from '@memory-agents/client';

export type ToolResult = CallToolResult;

/** A mistake in a tool's arguments that the service never saw. */
export class ToolInputError extends Error {}

/** Runs a tool; a refusal of the service or a bad argument becomes a tool error with its code. */
export async function run(work: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await work();
  } catch (error) {
    if (MemoryAgentsError.isInstance(error)) {
      const body = { error: error.message, code: error.code, status: error.status, request_id: error.requestId, ...(error.retryAfter === undefined ? {} : { retry_after: error.retryAfter }) };
      const retry = error.retryAfter === undefined ? '' : ` Retry after ${error.retryAfter} s.`;
      return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}${retry}` }], structuredContent: body };
    }
    if (error instanceof ToolInputError) return { isError: true, content: [{ type: 'text', text: `invalid_request: ${error.message}` }], structuredContent: { error: error.message, code: 'invalid_request' } };
    throw error;
  }
}
