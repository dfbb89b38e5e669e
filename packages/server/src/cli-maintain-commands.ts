import { isServiceError, silentLogger, type MaintenanceRunOutput, type MemoryService } from '@memory-agents/core';
import { stateLocation, UsageError, type CliValues } from './cli-options.js';
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
