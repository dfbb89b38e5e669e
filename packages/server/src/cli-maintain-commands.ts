import { isServiceError, silentLogger, type MaintenanceRunOutput, type MemoryService } from '@memory-agents/core';
import { MODEL_CLI_OPTIONS, modelSettings, type ModelSettings } from './model-options.js';
import { STATE_OPTIONS, stateLocation, UsageError, type CliValues, type OptionName } from './cli-options.js';
import { CliError, requireStoppedServer, type CliIo } from './cli-support.js';

// `memory-agents maintain <kind>` (issue 43): a maintenance run of one agent, a dry run unless --apply.

export const MAINTENANCE_COMMAND_KINDS = ['merge_duplicates', 'supersede_history', 'sweep_expired', 'reapply_policy'] as const;

/** The organization's caller that reaches the agent (the CLI is the operator: every organization). */
async function callerOf(service: MemoryService, agentId: string, organizationId: string | undefined) {
  const organizations = organizationId === undefined ? (await service.admin.listOrganizations()).map((org) => org.organizationId) : [organizationId];
  for (const id of organizations) {
    const caller = await service.as(id);
    if ((await service.agents.list({ caller })).some((agent) => agent.agent_id === agentId)) return caller;
  }
  throw new CliError('agent_not_found', `no agent ${agentId}${organizationId === undefined ? '' : ` in organization ${organizationId}`}`);
}

/** The run as lines: what it changes, the guard, what was applied. */
function describe(run: MaintenanceRunOutput): string {
  const lines = [`run=${run.run_id}  kind=${run.kind}  status=${run.status}  changes=${run.progress.total}  guard=${run.guard.allowed ? 'ok' : 'refuses'} (${(run.guard.share * 100).toFixed(1)}% of ${run.guard.current_memories} current memories, at most ${(run.guard.max_share * 100).toFixed(1)}%)`];
  if (run.guard.reason) lines.push(`guard: ${run.guard.reason}`);
  for (const change of run.changes) {
    const category = change.category && change.category.from !== change.category.to ? `  category ${change.category.from ?? 'none'} -> ${change.category.to ?? 'none'}` : '';
    lines.push(`${change.action.padEnd(9)} ${change.memory_id} ${JSON.stringify(change.memory_text)}${change.keep_id ? ` -> ${change.keep_id} ${JSON.stringify(change.keep_text)}` : ''}${category}  (${change.reason})`);
  }
  if (run.status === 'applied') lines.push(`applied: merged=${run.receipt.merged} superseded=${run.receipt.superseded} forgotten=${run.receipt.forgotten} redacted=${run.receipt.redacted} recategorised=${run.receipt.recategorised}; undo until ${run.undo_until} (POST .../maintenance/${run.run_id}/undo)`);
  return `${lines.join('\n')}\n`;
}

/** `memory-agents maintain <kind> --agent AGENT_ID [--apply]`: prints the dry run's diff, or applies it. */
export async function maintainCommand(kind: (typeof MAINTENANCE_COMMAND_KINDS)[number], values: CliValues, io: CliIo): Promise<number> {
  const agentId = values.agent;
  const command = `maintain ${kind}`;
  if (!agentId) throw new UsageError(`${command} needs --agent AGENT_ID`, command);
  const share = values['max-share'] === undefined ? undefined : Number(values['max-share']);
  if (share !== undefined && !(share > 0 && share <= 1)) throw new UsageError(`--max-share must be a number above 0 and at most 1, got ${values['max-share']}`, command);
  const location = stateLocation(values, command);
  await requireStoppedServer(location, command);
  const { composeService } = await import('./compose.js');
  const composed = await composeService(location, silentLogger, {}, { backgroundWork: false });
  await composed.service.start();
  try {
    const service = composed.service;
    const caller = await callerOf(service, agentId, values.org);
    let run = await service.maintenance.plan({ caller, agentId, body: { kind, ...(share === undefined ? {} : { max_share: share }) } });
    if (values.apply === true && run.progress.total > 0) run = await service.maintenance.apply({ caller, agentId, runId: run.run_id });
    io.stdout(values.json === true ? `${JSON.stringify(run, null, 2)}\n` : describe(run));
    return 0;
  } catch (error) {
    if (isServiceError(error)) throw new CliError(error.code, error.message);
    throw error;
  } finally {
    await composed.close();
  }
}

/**
 * `memory-agents maintain relearn --agent AGENT_ID [--thread THREAD_ID] [model options]`: the
 * agent's turns (or one thread's) learned again under the writer the model options name (the
 * default writer without them) and the agent's current policy, every turn (call after call of the
 * API's cursor); each memory that reads differently waits in the review queue (approve it there).
 */
export async function relearnCommand(values: CliValues, models: ModelSettings, io: CliIo): Promise<number> {
  const agentId = values.agent;
  const command = 'maintain relearn';
  if (!agentId) throw new UsageError(`${command} needs --agent AGENT_ID`, command);
  const location = stateLocation(values, command);
  await requireStoppedServer(location, command);
  const { composeService } = await import('./compose.js');
  const { createServiceModels } = await import('./model-options.js');
  const composed = await composeService(location, silentLogger, await createServiceModels(models, io.env), { backgroundWork: false });
  await composed.service.start();
  try {
    const service = composed.service;
    const caller = await callerOf(service, agentId, values.org);
    const totals = { turns: 0, unchanged: 0, proposals: [] as Awaited<ReturnType<MemoryService['review']['relearn']>>['proposals'] };
    let writer = '';
    for (let cursor: string | null | undefined; cursor !== null; ) {
      const step = await service.review.relearn({ caller, agentId, body: { max_turns: 2000, ...(values.thread === undefined ? {} : { thread_id: values.thread }), ...(cursor === undefined ? {} : { cursor }) } });
      writer = step.writer;
      totals.turns += step.turns_read;
      totals.unchanged += step.unchanged_turns;
      totals.proposals.push(...step.proposals);
      cursor = step.next_cursor;
    }
    if (values.json === true) {
      io.stdout(`${JSON.stringify({ agent_id: agentId, writer, turns_read: totals.turns, unchanged_turns: totals.unchanged, proposals: totals.proposals }, null, 2)}\n`);
      return 0;
    }
    const lines = [`writer=${writer}  turns=${totals.turns}  unchanged=${totals.unchanged}  proposed=${totals.proposals.length}`];
    for (const item of totals.proposals) lines.push(`proposed  ${item.memory.memory_id} ${JSON.stringify(item.memory.text)}${item.supersedes.length === 0 ? '' : `  replaces ${item.supersedes.join(', ')}`}`);
    if (totals.proposals.length > 0) lines.push('They wait in the review queue: approve or decline each (GET /v1/agents/AGENT_ID/review, the inspector, or the MCP tool review_decide).');
    io.stdout(`${lines.join('\n')}\n`);
    return 0;
  } catch (error) {
    if (isServiceError(error)) throw new CliError(error.code, error.message);
    throw error;
  } finally {
    await composed.close();
  }
}

/** The `maintain` commands of the CLI (issue 43), as `cli-main.ts`'s table takes them. */
export const MAINTAIN_COMMANDS: Readonly<Record<string, { usage: string; options: readonly OptionName[]; run(values: CliValues, io: CliIo): Promise<number> }>> = {
  ...Object.fromEntries(
    MAINTENANCE_COMMAND_KINDS.map((kind) => [
      `maintain ${kind}`,
      {
        usage: `memory-agents maintain ${kind} --agent AGENT_ID [--org ORG_ID] [--apply] [--max-share 0..1] [--data DIR | --database-url URL]
  A maintenance run of the agent (issue 43): prints the dry run's diff (each change, its memories'
  texts and why); with --apply applies it when the guard allows (at most --max-share, default 0.25,
  of the agent's current memories taken out of current search). Undo within the restore window
  over the API (POST .../maintenance/{run_id}/undo). On a data dir, stop the server first.`,
        options: ['agent', 'org', 'apply', 'max-share', ...STATE_OPTIONS],
        run: (values: CliValues, io: CliIo) => maintainCommand(kind, values, io),
      },
    ]),
  ),
  'maintain relearn': {
    usage: `memory-agents maintain relearn --agent AGENT_ID [--org ORG_ID] [--thread THREAD_ID] [--json] [model options] [--data DIR | --database-url URL]
  Learns the agent's turns (or one thread's) again under the writer the model options name (the
  offline default without them) and the agent's current extraction policy (issue 43). Each memory
  that now reads differently is proposed in the review queue, replacing the turn's current memories
  once approved there; nothing current changes now. On a data dir, stop the server first.`,
    options: ['agent', 'org', 'thread', 'json', ...STATE_OPTIONS, ...(Object.keys(MODEL_CLI_OPTIONS) as (keyof typeof MODEL_CLI_OPTIONS)[])],
    run: (values: CliValues, io: CliIo) => relearnCommand(values, modelSettings(values, io.env), io),
  },
};
