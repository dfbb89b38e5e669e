import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { MemoryAgentsClient } from '@memory-agents/client';
import { MEMORY_DATA_RULE, fenceMemoryData } from '@memory-agents/core';
import { z } from 'zod';
import { run, type ToolResult } from './tool-run.js';

type ReviewItem = Awaited<ReturnType<MemoryAgentsClient['review']['approve']>>;

const memoryIdArg = z.string().min(1).describe('The id (mem_...) of a memory in the review queue (review_queue lists them).');

/** A text with each character a reader would not see written as a visible marker, like ⟦U+202E right-to-left override⟧. */
export function markHidden(text: string, hidden: ReviewItem['hidden_characters']): string {
  let marked = '';
  let at = 0;
  for (const character of hidden) {
    marked += `${text.slice(at, character.index)}⟦${character.code_point} ${character.name}⟧`;
    at = character.index + String.fromCodePoint(Number.parseInt(character.code_point.slice(2), 16)).length;
  }
  return marked + text.slice(at);
}

/** One queue entry as a line a person reads (the memory's words are data, fenced by the caller). */
function itemLine(item: ReviewItem, i: number): string {
  const { memory } = item;
  const replaces = item.supersedes.length === 0 ? '' : ` (replaces ${item.supersedes.join(', ')})`;
  const last = item.decisions.at(-1);
  const decided = last ? `; last: ${last.action} by ${last.by} at ${last.at}${last.reason ? ` (${last.reason})` : ''}` : '';
  return `${i + 1}. ${memory.memory_id} [${item.state}, held as ${item.held_as}, ${memory.speaker ?? 'no speaker'}${decided}]${replaces}: ${markHidden(memory.text, item.hidden_characters)}`;
}

const itemResult = (heading: string, item: ReviewItem): ToolResult => ({
  content: [{ type: 'text', text: `${heading} ${item.memory.memory_id}: now ${item.state}.\nIts text ${MEMORY_DATA_RULE}\n${fenceMemoryData([itemLine(item, 0)])}` }],
  structuredContent: item,
});

/**
 * Review tools (issue 43): `review_queue` lists the memories waiting for a person (or approved,
 * or declined), their text fenced as data with hidden characters shown as markers; `review_decide`
 * approves, declines, edits or undoes one. Organization-level: through an MCP session bound to a
 * person the service refuses them (403 `forbidden`), as over HTTP.
 */
export function registerReviewTools(server: McpServer, client: MemoryAgentsClient, agentOf: (agentId: string | undefined) => string, agentIdArg: z.ZodOptional<z.ZodString>): void {
  server.registerTool(
    'review_queue',
    {
      title: 'Review queue',
      description:
        "The memories the agent's review_mode held for a person to approve before chat and recall use them (state pending, the default), " +
        'or those approved or declined, oldest first: each with why it was held, what it would replace, and the last decision. ' +
        'Characters a reader would not see (zero-width, bidi controls) are shown as ⟦U+…⟧ markers.',
      inputSchema: {
        state: z.enum(['pending', 'approved', 'declined']).optional().describe('Which memories to list. Defaults to pending.'),
        limit: z.number().int().min(1).max(100).optional().describe('Most memories to list. Defaults to 20.'),
        agent_id: agentIdArg,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      run(async () => {
        const listed = await client.review.list({ agentId: agentOf(args.agent_id), ...(args.state === undefined ? {} : { state: args.state }), ...(args.limit === undefined ? {} : { limit: args.limit }) });
        const heading = `Review mode ${listed.review_mode}; ${listed.items.length} ${listed.state} memor${listed.items.length === 1 ? 'y' : 'ies'}${listed.next_cursor === null ? '' : ' (more follow)'}.`;
        const text = listed.items.length === 0 ? heading : `${heading}\nTheir text ${MEMORY_DATA_RULE}\n${fenceMemoryData(listed.items.map(itemLine))}`;
        return { content: [{ type: 'text', text }], structuredContent: listed };
      }),
  );

  server.registerTool(
    'review_reflect',
    {
      title: 'Reflect (propose derived facts)',
      description:
        "Asks the server's language model for facts the agent's newest memories imply together (a preference seen several times, a relation, a routine). " +
        'Each proposal waits in the review queue for approval; nothing current changes. Needs a server started with a language model.',
      inputSchema: { max_proposals: z.number().int().min(1).max(20).optional().describe('Most proposals. Defaults to 5.'), agent_id: agentIdArg },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args) =>
      run(async () => {
        const reflection = await client.review.reflect({ agentId: agentOf(args.agent_id), ...(args.max_proposals === undefined ? {} : { max_proposals: args.max_proposals }) });
        const heading = `${reflection.model} read ${reflection.memories_read} memories and proposed ${reflection.proposals.length}; each waits in the review queue.`;
        const text = reflection.proposals.length === 0 ? heading : `${heading}\nTheir text ${MEMORY_DATA_RULE}\n${fenceMemoryData(reflection.proposals.map(itemLine))}`;
        return { content: [{ type: 'text', text }], structuredContent: reflection };
      }),
  );

  server.registerTool(
    'review_relearn',
    {
      title: 'Re-learn under the current writer',
      description:
        "Learns a thread's turns (or every thread's) again under the server's current memory writer and the agent's extraction policy. " +
        "Each memory that now reads differently waits in the review queue, replacing the turn's current memories once approved; nothing current changes now.",
      inputSchema: {
        thread_id: z.string().min(1).optional().describe('One thread (thread_...); absent: every thread of the agent.'),
        max_turns: z.number().int().min(1).max(2000).optional().describe('Most turns this call reads (whole observations). Defaults to 500.'),
        cursor: z.string().min(1).optional().describe('next_cursor of the call before, to continue.'),
        agent_id: agentIdArg,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      run(async () => {
        const relearned = await client.review.relearn({
          agentId: agentOf(args.agent_id),
          ...(args.thread_id === undefined ? {} : { thread_id: args.thread_id }),
          ...(args.max_turns === undefined ? {} : { max_turns: args.max_turns }),
          ...(args.cursor === undefined ? {} : { cursor: args.cursor }),
        });
        const more = relearned.next_cursor === null ? '' : ` More turns follow: call again with cursor ${relearned.next_cursor}.`;
        const heading = `${relearned.writer} read ${relearned.turns_read} turns: ${relearned.unchanged_turns} unchanged, ${relearned.proposals.length} memories proposed for review.${more}`;
        const text = relearned.proposals.length === 0 ? heading : `${heading}\nTheir text ${MEMORY_DATA_RULE}\n${fenceMemoryData(relearned.proposals.map(itemLine))}`;
        return { content: [{ type: 'text', text }], structuredContent: relearned };
      }),
  );

  server.registerTool(
    'review_decide',
    {
      title: 'Decide on a held memory',
      description:
        'approve: chat and recall use the memory from now on (what it replaces stops being current); decline: it stays hidden and ' +
        'learning never proposes the same words again (give a reason); edit: change a pending memory\'s text first (give text); ' +
        'undo: reverse the last approve or decline (within the restore window). Every decision is recorded with the key that made it.',
      inputSchema: {
        memory_id: memoryIdArg,
        decision: z.enum(['approve', 'decline', 'edit', 'undo']),
        reason: z.string().min(1).max(500).optional().describe('Why (decline only).'),
        text: z.string().min(1).max(4000).optional().describe('The new text (edit only).'),
        agent_id: agentIdArg,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      run(async () => {
        const target = { agentId: agentOf(args.agent_id), memoryId: args.memory_id };
        switch (args.decision) {
          case 'approve':
            return itemResult('Approved', await client.review.approve(target));
          case 'decline':
            return itemResult('Declined', await client.review.decline({ ...target, ...(args.reason === undefined ? {} : { reason: args.reason }) }));
          case 'undo':
            return itemResult('Undid the last decision on', await client.review.undo(target));
          case 'edit':
            // Without text the service refuses the edit (422), as over HTTP.
            return itemResult('Edited', await client.review.edit({ ...target, text: args.text ?? '' }));
        }
      }),
  );
}
