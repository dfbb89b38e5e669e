import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { MemoryAgentsClient } from '@memory-agents/client';
import { MEMORY_DATA_RULE, fenceMemoryData, type MaintenanceRunOutput } from '@memory-agents/core';
import { z } from 'zod';
import { run, type ToolResult } from './tool-run.js';

const KINDS = ['merge_duplicates', 'supersede_history', 'sweep_expired', 'reapply_policy'] as const;
const runIdArg = z.string().min(1).describe('A maintenance run id (mnt_...) from maintenance_plan or maintenance_list.');

/** A run as a person reads it: its state and guard, then (fenced: memory text is data) its diff. */
function runText(heading: string, found: MaintenanceRunOutput): string {
  const { guard, receipt, progress } = found;
  const lines = [
    `${heading} ${found.run_id} (${found.kind}): ${found.status}, ${progress.done} of ${progress.total} changes done, planned by ${found.created_by}.`,
    guard.allowed
      ? `Guard: allowed (takes ${(guard.share * 100).toFixed(1)}% of ${guard.current_memories} current memories; at most ${(guard.max_share * 100).toFixed(1)}%).`
      : `Guard: refuses: ${guard.reason}`,
    ...(found.applied_at === null ? [] : [`Applied ${found.applied_at}: merged ${receipt.merged}, superseded ${receipt.superseded}, forgotten ${receipt.forgotten}; undo until ${found.undo_until}.`]),
    ...(found.error === null ? [] : [`Note: ${found.error}`]),
  ];
  if (found.changes.length === 0) return [...lines, 'No changes.'].join('\n');
  const diff = found.changes.map((change, i) => {
    const kept = change.keep_id === null ? '' : ` -> kept ${change.keep_id}: ${change.keep_text ?? '(erased)'}`;
    return `${i + 1}. ${change.action} ${change.memory_id}: ${change.memory_text ?? '(erased)'}${kept} (${change.reason})`;
  });
  return `${lines.join('\n')}\nThe diff ${MEMORY_DATA_RULE}\n${fenceMemoryData(diff)}`;
}

const result = (heading: string, found: MaintenanceRunOutput): ToolResult => ({ content: [{ type: 'text', text: runText(heading, found) }], structuredContent: found });

/**
 * Maintenance tools (issue 43): `maintenance_plan` (a dry run: the diff, nothing changed),
 * `maintenance_apply`, `maintenance_undo` and `maintenance_list` (one run's diff with `run_id`).
 * Runs are organization-level: through an MCP session bound to a person (`--end-user`) the
 * service refuses them (403 `forbidden`), as over HTTP.
 */
export function registerMaintenanceTools(server: McpServer, client: MemoryAgentsClient, agentOf: (agentId: string | undefined) => string, agentIdArg: z.ZodOptional<z.ZodString>): void {
  server.registerTool(
    'maintenance_plan',
    {
      title: 'Plan maintenance (dry run)',
      description:
        "A dry run of one maintenance kind over the agent's memories: merge_duplicates (restatements of one fact), supersede_history " +
        '(old facts a later memory replaces), sweep_expired (memories past their expiry). Returns the diff and whether the guard allows ' +
        'applying it; nothing changes until maintenance_apply.',
      inputSchema: {
        kind: z.enum(KINDS).describe('What to tidy.'),
        max_share: z.number().gt(0).max(1).optional().describe("Largest share of the agent's current memories applying may take away. Defaults to 0.25."),
        agent_id: agentIdArg,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (args) =>
      run(async () => {
        const planned = await client.maintenance.plan({ agentId: agentOf(args.agent_id), kind: args.kind, ...(args.max_share === undefined ? {} : { max_share: args.max_share }) });
        return result('Dry run', planned);
      }),
  );

  const runTools = [
    {
      name: 'maintenance_apply',
      title: 'Apply maintenance',
      description:
        "Applies exactly a dry run's diff (maintenance_plan). Refused when the guard refuses, when a memory changed since the dry run " +
        '(plan again), or when it is not a dry run. Undoable with maintenance_undo until its undo_until.',
      destructive: true,
      call: (agentId: string, runId: string) => client.maintenance.apply({ agentId, runId }),
      heading: 'Applied run',
    },
    {
      name: 'maintenance_undo',
      title: 'Undo maintenance',
      description: 'Reverses every change of an applied maintenance run, within its undo window.',
      destructive: false,
      call: (agentId: string, runId: string) => client.maintenance.undo({ agentId, runId }),
      heading: 'Undone run',
    },
  ];
  for (const tool of runTools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: { run_id: runIdArg, agent_id: agentIdArg },
        annotations: { readOnlyHint: false, destructiveHint: tool.destructive, idempotentHint: false, openWorldHint: false },
      },
      (args) => run(async () => result(tool.heading, await tool.call(agentOf(args.agent_id), args.run_id))),
    );
  }

  server.registerTool(
    'maintenance_list',
    {
      title: 'List maintenance runs',
      description: "The agent's maintenance runs, newest first (kind, status, who planned it: a key or the idle schedule). With run_id: that run and its diff.",
      inputSchema: { run_id: runIdArg.optional(), limit: z.number().int().min(1).max(100).optional().describe('Most runs to list. Defaults to 20.'), agent_id: agentIdArg },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      run(async () => {
        const agentId = agentOf(args.agent_id);
        if (args.run_id !== undefined) return result('Run', await client.maintenance.get({ agentId, runId: args.run_id }));
        const { runs } = await client.maintenance.list({ agentId, ...(args.limit === undefined ? {} : { limit: args.limit }) });
        const text =
          runs.length === 0
            ? 'No maintenance runs.'
            : runs.map((found) => `${found.run_id} ${found.kind} ${found.status} (${found.progress.total} changes, by ${found.created_by}, ${found.created_at})`).join('\n');
        return { content: [{ type: 'text', text }], structuredContent: { runs } };
      }),
  );
}
